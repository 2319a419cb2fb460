import { access, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { TaskStatus } from '../../schemas/tasks.js';
import { SerializedAnswer } from '../../schemas/job-response.js';
import { isTerminal, TASK_FILES } from '../../workers/task-runner/record-files.js';
import { TASK_TYPE } from '../../workers/task-runner/task-sdk.js';
import { TaskEvents } from './task-events.js';
import { isSafeDir, readMetadata, readStatus } from './records.js';
import { parseTaskId, recordedSources, taskDirOf, type TaskIdParts } from './task-ids.js';

/** One Task directory as the service knows it. */
export interface TaskRecord {
  readonly id: string;
  readonly parts: TaskIdParts;
  readonly dir: string;
  /** Null for a metadata-only directory. */
  readonly status: TaskStatus | null;
  readonly hasMetadata: boolean;
  /** created_at from status, else from metadata. */
  readonly createdAt: string | null;
  /** Recorded source_tasks (status config, else metadata input_params). */
  readonly sources: readonly string[];
}

const SCAN_CONCURRENCY = 64;
const STATE_RANK = { queued: 0, running: 1, succeeded: 2, failed: 2, cancelled: 2 } as const;

/** Spec order of list_task_statuses: created_at, then task_id, both descending. */
function newestFirst(a: TaskStatus, b: TaskStatus): number {
  const ca = a.created_at ?? '';
  const cb = b.created_at ?? '';
  if (ca !== cb) return ca < cb ? 1 : -1;
  return a.task_id < b.task_id ? 1 : a.task_id > b.task_id ? -1 : 0;
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/**
 * The in-memory table of every task record, built by one scan at start and then kept fresh by
 * whoever observes a change (the live-task watchers, submit, delete). Queries answer from here;
 * followers wait for `onNextChange` instead of reading files themselves.
 */
export class TaskIndex {
  readonly workspace: string;
  /** Typed feed of every change, for subscribers interested in all Tasks. */
  readonly events = new TaskEvents();
  readonly #records = new Map<string, TaskRecord>();
  /** Task IDs a submit, delete or snapshot is rewriting right now: disk reads of them are not trusted meanwhile. */
  readonly #claims = new Set<string>();
  /** Child links (recorded source_tasks, reversed), so lineage costs the size of its answer. */
  readonly #children = new Map<string, Set<string>>();
  /** `childrenOf` answers, sorted once until the links of that parent change. */
  readonly #sortedChildren = new Map<string, readonly string[]>();
  /** A counter of writes, and the count at each Task's last write (to drop reads overtaken by writes). */
  #changes = 0;
  readonly #changed = new Map<string, number>();
  readonly #listeners = new Map<string, Set<() => void>>();
  #sorted: TaskStatus[] | undefined;
  /** `sortedStatuses()` as a JSON array, cached with it. */
  #sortedJson: SerializedAnswer | undefined;
  /** Each status's JSON text; statuses are replaced, never changed, so the text stays true. */
  readonly #json = new WeakMap<TaskStatus, string>();

  constructor(workspace: string) {
    this.workspace = workspace;
  }

  /** Reads every `<type>/<task_id>` directory of the workspace once. */
  async scan(): Promise<void> {
    const ids: string[] = [];
    for (const type of await readdir(this.workspace, { withFileTypes: true })) {
      if (!type.isDirectory() || !TASK_TYPE.test(type.name)) continue;
      for (const entry of await readdir(join(this.workspace, type.name), { withFileTypes: true }).catch(() => [])) {
        if (entry.isDirectory() && parseTaskId(entry.name)?.type === type.name) ids.push(entry.name);
      }
    }
    let next = 0;
    const worker = async () => {
      while (next < ids.length) await this.load(ids[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(SCAN_CONCURRENCY, ids.length) }, worker));
  }

  /** Re-reads one Task directory from disk; the record disappears when nothing valid is left. */
  async load(id: string): Promise<TaskRecord | undefined> {
    const parts = parseTaskId(id);
    if (!parts) return undefined;
    if (this.#claims.has(id)) return this.#records.get(id);
    const generation = this.#changes;
    const dir = taskDirOf(this.workspace, id, parts);
    const safe = (await isSafeDir(join(this.workspace, parts.type))) && (await isSafeDir(dir));
    const status = safe ? await readStatus(dir, id, parts.type) : null;
    const metadata = status || !safe ? null : await readMetadata(dir, id);
    const hasMetadata = status ? await exists(join(dir, TASK_FILES.metadata)) : metadata !== null;
    // Someone wrote this Task while we read it: what they recorded is newer than our read.
    if ((this.#changed.get(id) ?? -1) > generation) return this.#records.get(id);
    if (status) return this.put({ id, parts, dir, status, hasMetadata, createdAt: status.created_at, sources: recordedSources(status.config['source_tasks']) });
    if (metadata) return this.put({ id, parts, dir, status: null, hasMetadata: true, createdAt: metadata.created_at, sources: recordedSources(metadata.input_params['source_tasks']) });
    this.remove(id);
    return undefined;
  }

  /** Records a status observed or written by the service (newer than what the index holds). */
  setStatus(id: string, parts: TaskIdParts, status: TaskStatus, hasMetadata?: boolean): TaskRecord {
    const previous = this.#records.get(id);
    // A read that started before a newer write may land after it: a run's state never goes back.
    if (previous?.status?.run_id === status.run_id && STATE_RANK[status.state] < STATE_RANK[previous.status.state]) return previous;
    return this.put({
      id,
      parts,
      dir: taskDirOf(this.workspace, id, parts),
      status,
      hasMetadata: hasMetadata ?? (status.state === 'succeeded' || (previous?.hasMetadata ?? false)),
      createdAt: status.created_at,
      sources: recordedSources(status.config['source_tasks']),
    });
  }

  /**
   * Holds Task IDs for a directory operation: the release function, or null when one of them is
   * held already (nothing is taken then).
   */
  claim(ids: readonly string[]): (() => void) | null {
    if (ids.some((id) => this.#claims.has(id))) return null;
    for (const id of ids) this.#claims.add(id);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const id of ids) this.#claims.delete(id);
    };
  }

  isClaimed(id: string): boolean {
    return this.#claims.has(id);
  }

  /** IDs of the Tasks that name `id` among their source_tasks, sorted (do not modify the answer). */
  childrenOf(id: string): readonly string[] {
    const set = this.#children.get(id);
    if (!set) return [];
    let sorted = this.#sortedChildren.get(id);
    if (!sorted) this.#sortedChildren.set(id, (sorted = [...set].sort()));
    return sorted;
  }

  put(record: TaskRecord): TaskRecord {
    this.#changed.set(record.id, ++this.#changes);
    this.#sorted = this.#sortedJson = undefined;
    this.#link(this.#records.get(record.id), record);
    this.#records.set(record.id, record);
    this.events.emit('task:status', { id: record.id, status: record.status });
    this.notify(record.id);
    return record;
  }

  remove(id: string): void {
    this.#changed.set(id, ++this.#changes);
    this.#sorted = this.#sortedJson = undefined;
    const previous = this.#records.get(id);
    if (!previous) return;
    this.#link(previous, undefined);
    this.#records.delete(id);
    this.events.emit('task:status', { id, status: null });
    this.notify(id);
  }

  /** Keeps the child links in step with a record's sources. */
  #link(previous: TaskRecord | undefined, next: TaskRecord | undefined): void {
    const before = previous?.sources ?? [];
    const after = next?.sources ?? [];
    if (before.length === after.length && before.every((id, i) => id === after[i])) return;
    for (const parent of previous?.sources ?? []) {
      this.#sortedChildren.delete(parent);
      const set = this.#children.get(parent);
      set?.delete(previous!.id);
      if (set?.size === 0) this.#children.delete(parent);
    }
    for (const parent of next?.sources ?? []) {
      this.#sortedChildren.delete(parent);
      let set = this.#children.get(parent);
      if (!set) this.#children.set(parent, (set = new Set()));
      set.add(next!.id);
    }
  }

  get(id: string): TaskRecord | undefined {
    return this.#records.get(id);
  }

  all(): IterableIterator<TaskRecord> {
    return this.#records.values();
  }

  /** Records whose status is queued or running. */
  active(): TaskRecord[] {
    return [...this.#records.values()].filter((r) => r.status && !isTerminal(r.status.state));
  }

  /** Wakes everyone waiting on this Task (status, log or progress changed). */
  notify(id: string): void {
    const listeners = this.#listeners.get(id);
    if (!listeners) return;
    this.#listeners.delete(id);
    for (const listener of listeners) listener();
  }

  /** Calls `listener` once at the next change of this Task; returns the way to stop waiting. */
  onNextChange(id: string, listener: () => void): () => void {
    let listeners = this.#listeners.get(id);
    if (!listeners) this.#listeners.set(id, (listeners = new Set()));
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /** Every status, newest first (created_at, then task_id, descending); cached until a change. */
  sortedStatuses(): readonly TaskStatus[] {
    this.#sorted ??= [...this.#records.values()].flatMap((r) => (r.status ? [r.status] : [])).sort(newestFirst);
    return this.#sorted;
  }

  /**
   * `sortedStatuses()` with its JSON text, built from each status's cached text: a change to
   * one Task re-serialises only that Task (10,000 statuses are ~5 MB of JSON).
   */
  sortedStatusesJson(): SerializedAnswer {
    if (!this.#sortedJson) {
      const sorted = this.sortedStatuses();
      this.#sortedJson = new SerializedAnswer(sorted, `[${sorted.map((st) => this.statusJson(st).json).join(',')}]`);
    }
    return this.#sortedJson;
  }

  /** One status with its cached JSON text. */
  statusJson(status: TaskStatus): SerializedAnswer {
    let json = this.#json.get(status);
    if (json === undefined) this.#json.set(status, (json = JSON.stringify(status)));
    return new SerializedAnswer(status, json);
  }
}
