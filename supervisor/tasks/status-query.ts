import { ValueError } from '../../core/errors.js';
import { SerializedAnswer } from '../../schemas/job-response.js';
import type { QueryTaskStatusesInput, TaskStatusPage } from '../../schemas/tasks.js';
import type { TaskIndex } from './records/task-index.js';
import type { TaskRecord } from './records/task-record.js';
import { compareListed, hasStatus, keyOf, seek, type OrderKey } from './records/status-order.js';

type Filter = (record: TaskRecord) => boolean;
type Field = NonNullable<QueryTaskStatusesInput['fields']>[number];

const HASH = 0x23;

/** One predicate for the filters given (an ISO instant compares as text once normalised). */
function filterOf(q: QueryTaskStatusesInput): Filter {
  const tests: Filter[] = [];
  if (q.state) {
    const states = new Set<string>(q.state);
    tests.push((r) => states.has(r.state!));
  }
  // Compared inside the ID: a stored record keeps no parts, and a filter passes over the whole history.
  if (q.task_type !== undefined) {
    const type = q.task_type;
    tests.push((r) => r.id.startsWith(type) && r.id.charCodeAt(type.length) === HASH);
  }
  if (q.registration !== undefined) {
    const registration = q.registration;
    tests.push((r) => {
      const at = r.id.indexOf('#') + 1;
      return r.id.startsWith(registration, at) && r.id.charCodeAt(at + registration.length) === HASH;
    });
  }
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

/** A status's JSON text with task_id and `fields` only (a dashboard's rows need a few of its fields). */
function projectedJson(record: TaskRecord, fields: readonly Field[]): string {
  const status = record.status!;
  const picked: Partial<Record<Field, unknown>> = { task_id: status.task_id };
  for (const field of fields) picked[field] = status[field];
  return JSON.stringify(picked);
}

/** The answer as JSON text built from each record's cached status text (whole statuses are never re-serialised). */
function pageAnswer(index: TaskIndex, items: readonly TaskRecord[], rest: Omit<TaskStatusPage, 'items'>, fields: readonly Field[] | undefined, shown?: TaskRecord[]): SerializedAnswer<TaskStatusPage> {
  shown?.push(...items);
  const texts = items.map((r) => (fields ? projectedJson(r, fields) : index.jsonOf(r)));
  const json = `{"items":[${texts.join(',')}],${JSON.stringify(rest).slice(1)}`;
  return SerializedAnswer.ofJson<TaskStatusPage>(json);
}

/** The records changed since a version, split into those to show and the IDs to drop. */
function changedPage(index: TaskIndex, ids: readonly string[], q: QueryTaskStatusesInput, version: string, shown?: TaskRecord[]): SerializedAnswer<TaskStatusPage> {
  const matches = filterOf(q);
  const items: TaskRecord[] = [];
  const deleted: string[] = [];
  for (const id of ids) {
    const record = index.get(id);
    if (record && hasStatus(record) && matches(record)) items.push(record);
    else deleted.push(id);
  }
  return pageAnswer(index, items.sort(compareListed), { total: null, next_cursor: null, version, deleted: deleted.sort(), reset: false }, q.fields, shown);
}

/**
 * `query_task_statuses`: filtered pages in list_task_statuses order, or (with `changed_since`) only
 * what changed since an earlier answer. Answered from the index alone: a page costs its own size
 * plus one pass of the filter over the history for `total`. `shown` receives the records of the
 * answer's items.
 */
export function queryStatuses(index: TaskIndex, q: QueryTaskStatusesInput, shown?: TaskRecord[]): SerializedAnswer<TaskStatusPage> {
  const version = index.changes.cursor();
  const changed = q.changed_since === undefined ? undefined : index.changes.since(q.changed_since);
  if (changed) return changedPage(index, changed, q, version, shown);
  const matches = filterOf(q);
  const listed = index.listed();
  const start = q.cursor === undefined ? 0 : seek(listed, decodeCursor(q.cursor), true);
  const items: TaskRecord[] = [];
  let total = 0;
  let next: string | null = null;
  const unfiltered = Object.keys(q).every((k) => k === 'limit' || k === 'cursor' || k === 'changed_since' || k === 'fields');
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
  return pageAnswer(index, items, { total, next_cursor: next, version, deleted: [], reset: changed === null }, q.fields, shown);
}
