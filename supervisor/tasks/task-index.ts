import { access, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { TaskStatus } from '../../schemas/tasks.js';
import { isTerminal, TASK_FILES } from '../../workers/task-runner/record-files.js';
import { TASK_TYPE } from '../../workers/task-runner/task-sdk.js';
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

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/**
 * The in-memory table of every task record, built by one scan at start and then kept fresh by
 * whoever observes a change (the live-task watchers, submit, delete). Queries answer from here.
 * `changed(id)` is one shared promise per Task, so any number of followers wait on one value.
 */
export class TaskIndex {
  readonly workspace: string;
  /** Task IDs a submit or delete is rewriting right now: disk reads of them are not trusted meanwhile. */
  readonly claims = new Set<string>();
  readonly #records = new Map<string, TaskRecord>();
  /** A counter of writes, and the count at each Task's last write (to drop reads overtaken by writes). */
  #changes = 0;
  readonly #changed = new Map<string, number>();
  readonly #waiters = new Map<string, { promise: Promise<void>; resolve: () => void }>();

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
    if (this.claims.has(id)) return this.#records.get(id);
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

  put(record: TaskRecord): TaskRecord {
    this.#changed.set(record.id, ++this.#changes);
    this.#records.set(record.id, record);
    this.notify(record.id);
    return record;
  }

  remove(id: string): void {
    this.#changed.set(id, ++this.#changes);
    if (this.#records.delete(id)) this.notify(id);
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
    const waiter = this.#waiters.get(id);
    if (!waiter) return;
    this.#waiters.delete(id);
    waiter.resolve();
  }

  /** Resolves at the next change of this Task; one shared promise for all waiters. */
  changed(id: string): Promise<void> {
    let waiter = this.#waiters.get(id);
    if (!waiter) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      waiter = { promise, resolve };
      this.#waiters.set(id, waiter);
    }
    return waiter.promise;
  }
}
