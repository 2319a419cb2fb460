import { ValueError } from '../../core/errors.js';
import { SerializedAnswer } from '../../schemas/job-response.js';
import type { QueryTaskStatusesInput, TaskStatusPage } from '../../schemas/tasks.js';
import type { TaskIndex, TaskRecord } from './task-index.js';
import { compareListed, hasStatus, keyOf, seek, type OrderKey } from './status-order.js';

type Filter = (record: TaskRecord) => boolean;

/** One predicate for the filters given (an ISO instant compares as text once normalised). */
function filterOf(q: QueryTaskStatusesInput): Filter {
  const tests: Filter[] = [];
  if (q.state) {
    const states = new Set<string>(q.state);
    tests.push((r) => states.has(r.state!));
  }
  if (q.task_type !== undefined) tests.push((r) => r.parts.type === q.task_type);
  if (q.registration !== undefined) tests.push((r) => r.parts.registration === q.registration);
  if (q.created_after !== undefined) {
    const after = new Date(q.created_after).toISOString();
    tests.push((r) => (r.createdAt ?? '') > after);
  }
  if (q.created_before !== undefined) {
    const before = new Date(q.created_before).toISOString();
    tests.push((r) => r.createdAt !== null && r.createdAt < before);
  }
  if (q.id_contains !== undefined) {
    const text = q.id_contains.toLowerCase();
    tests.push((r) => r.id.toLowerCase().includes(text));
  }
  return (r) => tests.every((t) => t(r));
}

function encodeCursor(key: OrderKey): string {
  return Buffer.from(JSON.stringify([key.createdAt, key.id])).toString('base64url');
}

function decodeCursor(cursor: string): OrderKey {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt === 'string' && typeof id === 'string') return { createdAt, id };
  } catch {
    // reported below
  }
  throw new ValueError('cursor is not a next_cursor of query_task_statuses; start again without it');
}

/** The answer as JSON text built from each record's cached status text (the items are never re-serialised). */
function pageAnswer(index: TaskIndex, items: readonly TaskRecord[], rest: Omit<TaskStatusPage, 'items'>): SerializedAnswer<TaskStatusPage> {
  const json = `{"items":[${items.map((r) => index.jsonOf(r)).join(',')}],${JSON.stringify(rest).slice(1)}`;
  return new SerializedAnswer(JSON.parse(json) as TaskStatusPage, json);
}

/** The records changed since a version, split into those to show and the IDs to drop. */
function changedPage(index: TaskIndex, ids: readonly string[], matches: Filter, version: string): SerializedAnswer<TaskStatusPage> {
  const items: TaskRecord[] = [];
  const deleted: string[] = [];
  for (const id of ids) {
    const record = index.get(id);
    if (record && hasStatus(record) && matches(record)) items.push(record);
    else deleted.push(id);
  }
  return pageAnswer(index, items.sort(compareListed), { total: null, next_cursor: null, version, deleted: deleted.sort(), reset: false });
}

/**
 * `query_task_statuses`: filtered pages in list_task_statuses order, or (with `changed_since`) only
 * what changed since an earlier answer. Answered from the index alone: a page costs its own size
 * plus one pass of the filter over the history for `total`.
 */
export function queryStatuses(index: TaskIndex, q: QueryTaskStatusesInput): SerializedAnswer<TaskStatusPage> {
  const matches = filterOf(q);
  const version = index.changes.cursor();
  const changed = q.changed_since === undefined ? undefined : index.changes.since(q.changed_since);
  if (changed) return changedPage(index, changed, matches, version);
  const listed = index.listed();
  const start = q.cursor === undefined ? 0 : seek(listed, decodeCursor(q.cursor), true);
  const items: TaskRecord[] = [];
  let total = 0;
  let next: string | null = null;
  const unfiltered = Object.keys(q).every((k) => k === 'limit' || k === 'cursor' || k === 'changed_since');
  for (let i = unfiltered ? start : 0; i < listed.length; i++) {
    const record = listed[i]!;
    if (!unfiltered && !matches(record)) continue;
    if (!unfiltered) total++;
    if (i < start) continue;
    if (items.length < q.limit) items.push(record);
    else if (next === null) {
      next = encodeCursor(keyOf(items[items.length - 1]!));
      if (unfiltered) break;
    }
  }
  if (unfiltered) total = listed.length;
  return pageAnswer(index, items, { total, next_cursor: next, version, deleted: [], reset: changed === null });
}
