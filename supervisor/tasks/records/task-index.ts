import { lstatSync } from 'node:fs';
import { access, lstat, readdir } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { TaskStatus } from '../../../schemas/tasks.js';
import { SerializedAnswer, StreamedAnswer } from '../../../schemas/job-response.js';
import { isTerminal, TASK_FILES } from '../../../core/task-record/record-files.js';
import { TASK_TYPE } from '../../../core/task-record/id-rules.js';
import { TaskEvents } from './task-events.js';
import { ChangeLog } from './change-log.js';
import { readIndexFile, writeIndexFile } from './index-file.js';
import { stampOf, StoredRecord, type IndexSource, type RecordHome } from './stored-record.js';
import type { TaskRecord } from './task-record.js';
import { listingChunks, statusTexts } from './status-texts.js';
import { isSafeDir, readMetadata, readStatus } from './records.js';
import { StatusOrder } from './status-order.js';
import { isTaskIdOfType, parseTaskId, recordedSources, taskDirOf, type TaskIdParts } from './task-ids.js';

const SCAN_CONCURRENCY = 64;
const STATE_RANK = { queued: 0, running: 1, succeeded: 2, failed: 2, cancelled: 2 } as const;
/** Directories checked against the index file per event-loop turn. */
const CHECK_BATCH = 4096;

/** Runs `work` over `items`, SCAN_CONCURRENCY at a time. */
async function inParallel<T>(items: readonly T[], work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(SCAN_CONCURRENCY, items.length) }, worker));
}

/** Whether a record of the index file still describes its directory (anything unreadable is re-read). */
function isCurrent(record: StoredRecord, typeDir: string): boolean {
  try {
    const stats = lstatSync(`${typeDir}${record.id}`, { throwIfNoEntry: false });
    return stats?.isDirectory() === true && record.matches(stats);
  } catch {
    return false;
  }
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
  /** Versions of every write and removal (to drop reads overtaken by writes, and for `changed_since`). */
  readonly changes = new ChangeLog();
  readonly #listeners = new Map<string, Set<() => void>>();
  /** Records with a status in listing order, kept sorted as they change. */
  readonly #order = new StatusOrder();
  /** Each status's JSON text; statuses are replaced, never changed, so the text stays true. */
  readonly #json = new WeakMap<TaskStatus, string>();
  /** The index file, or undefined for an index that keeps none. */
  readonly #file: string | undefined;
  #saving: Promise<void> = Promise.resolve();
  /** True while the start-up scan reads records: the order is rebuilt once after it. */
  #bulk = false;
  /** Index files that stored records read their statuses from. */
  readonly #sources: IndexSource[] = [];
  /** Of the finished records read from disk (their texts in memory). */
  readonly #home: RecordHome;
  /** Resolves when every record taken from the index file has been checked against its directory. */
  checked: Promise<void> = Promise.resolve();
  #closing = false;

  constructor(workspace: string, file?: string) {
    this.workspace = workspace;
    this.#home = { workspace, source: null };
    this.#file = file;
  }

  /**
   * Builds the index at start. Records of the index file are taken as they are (no read per
   * record), directories the file does not know are read from disk before the service answers,
   * and those it knows are checked against their stamps afterwards, a batch per event-loop turn:
   * `checked` resolves when that is done (Jobs wait for it, so answers stay correct; `/health`
   * does not). Answers the entries of type directories that are not Task IDs or hold no record
   * (for the sweep of leftovers), so that nobody lists the type directories again.
   */
  async scan(): Promise<Array<[type: string, name: string]>> {
    const { records: stored, source } = this.#file ? readIndexFile(this.#file, this.workspace) : { records: [], source: undefined };
    if (source) this.#sources.push(source);
    for (const record of stored) this.#adopt(record);
    const known: StoredRecord[] = [];
    const unread: string[] = [];
    const others: Array<[string, string]> = [];
    for (const type of await readdir(this.workspace, { withFileTypes: true })) {
      if (!type.isDirectory() || !TASK_TYPE.test(type.name)) continue;
      for (const name of await readdir(join(this.workspace, type.name)).catch(() => [])) {
        const record = this.#records.get(name);
        if (!isTaskIdOfType(name, type.name)) others.push([type.name, name]);
        else if (record) known.push(record as StoredRecord);
        else unread.push(name);
      }
    }
    // Records of the file whose directory is gone (rare: a Set only then).
    if (known.length < this.#records.size) {
      const onDisk = new Set(known.map((r) => r.id));
      for (const record of stored) if (!onDisk.has(record.id) && this.#records.get(record.id) === record) this.#drop(record);
    }
    stored.length = 0;
    // Read in bulk: the order is sorted once at the end instead of kept at every insert.
    this.#bulk = true;
    try {
      await inParallel(unread, async (id) => {
        if (!(await this.load(id))) others.push([id.slice(0, id.indexOf('#')), id]);
      });
    } finally {
      this.#bulk = false;
      this.#order.rebuild(this.#records.values());
    }
    this.checked = this.#check(known, unread.length > 0);
    return others;
  }

  /** Records of the index file whose directory changed since it was written are read again (see scan). */
  async #check(records: StoredRecord[], changed: boolean): Promise<void> {
    const stale: string[] = [];
    const typeDirs = new Map<string, string>();
    for (let i = 0; i < records.length; i++) {
      // Synchronous lstat in batches: ~1 µs each, against ~20 µs for a promise per directory.
      if (i % CHECK_BATCH === 0) await nextTurn();
      if (this.#closing) return;
      const record = records[i]!;
      if (this.#records.get(record.id) !== record) continue; // written by the service since
      // The path without parsing the ID (`<workspace>/<type>/`, built once per type).
      const type = record.id.slice(0, record.id.indexOf('#'));
      let typeDir = typeDirs.get(type);
      if (typeDir === undefined) typeDirs.set(type, (typeDir = `${join(this.workspace, type)}${sep}`));
      if (!isCurrent(record, typeDir)) stale.push(record.id);
    }
    await inParallel(stale, (id) => this.load(id));
    if (changed || stale.length > 0) await this.save();
  }

  /** A record from the index file, at start (nobody follows yet: no events, no versions; the order is built after). */
  #adopt(record: StoredRecord): void {
    this.#link(undefined, record);
    this.#records.set(record.id, record);
  }

  /** Forgets a record of the index file whose directory is gone (at start, before anyone asks). */
  #drop(record: StoredRecord): void {
    this.#link(record, undefined);
    this.#records.delete(record.id);
  }

  /** Writes the index file and lets go of the older ones (call once, when the service stops). */
  async close(): Promise<void> {
    this.#closing = true;
    await this.checked;
    await this.save();
    for (const source of this.#sources.splice(0)) source.close();
  }

  /** Writes the index file from what the index holds now (one write at a time); resolves when written. */
  save(): Promise<void> {
    const file = this.#file;
    if (!file) return Promise.resolve();
    // In listing order, so that a listing reads whole runs of the file at once.
    const records = [...this.#order.view(), ...[...this.#records.values()].filter((r) => r.state === undefined)];
    this.#saving = this.#saving
      .then(() => writeIndexFile(file, records, (batch) => statusTexts(batch, (r) => this.jsonOf(r))))
      .catch((err: unknown) => console.error('taskyard: writing the task index file failed', err));
    return this.#saving;
  }

  /** Re-reads one Task directory from disk; the record disappears when nothing valid is left. */
  async load(id: string): Promise<TaskRecord | undefined> {
    const parts = parseTaskId(id);
    if (!parts) return undefined;
    if (this.#claims.has(id)) return this.#records.get(id);
    const generation = this.changes.version;
    const dir = taskDirOf(this.workspace, id, parts);
    // Stamped before reading: a write after it makes the stamp stale, so the next start re-reads.
    const stats = (await isSafeDir(join(this.workspace, parts.type))) ? await lstat(dir).catch(() => null) : null;
    const safe = stats?.isDirectory() ?? false;
    const status = safe ? await readStatus(dir, id, parts.type) : null;
    const metadata = status || !safe ? null : await readMetadata(dir, id);
    const hasMetadata = status ? await exists(join(dir, TASK_FILES.metadata)) : metadata !== null;
    // Someone wrote this Task while we read it: what they recorded is newer than our read.
    if (this.changes.lastChange(id) > generation) return this.#records.get(id);
    if (stats && status) {
      const sources = recordedSources(status.config['source_tasks']);
      // A finished record is kept as its JSON text only (a third of the memory of the object).
      if (isTerminal(status.state)) return this.put(new StoredRecord(this.#home, id, stats, status.state, hasMetadata, status.created_at, sources, JSON.stringify(status)));
      return this.put({ id, parts, dir, status, state: status.state, stamp: stampOf(stats), hasMetadata, createdAt: status.created_at, sources });
    }
    if (stats && metadata) {
      const sources = recordedSources(metadata.input_params['source_tasks']);
      return this.put({ id, parts, dir, status: null, state: undefined, stamp: stampOf(stats), hasMetadata: true, createdAt: metadata.created_at, sources });
    }
    this.remove(id);
    return undefined;
  }

  /** Records a status observed or written by the service (newer than what the index holds). */
  setStatus(id: string, parts: TaskIdParts, status: TaskStatus, hasMetadata?: boolean): TaskRecord {
    const previous = this.#records.get(id);
    // A read that started before a newer write may land after it: a run's state never goes back.
    if (previous?.state !== undefined && previous.status?.run_id === status.run_id && STATE_RANK[status.state] < STATE_RANK[previous.state]) return previous;
    return this.put({
      id,
      parts,
      dir: taskDirOf(this.workspace, id, parts),
      status,
      state: status.state,
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
    const previous = this.#records.get(record.id);
    this.#link(previous, record);
    this.#records.set(record.id, record);
    // The start-up scan: nobody asks or follows yet (no versions, no events); the order is built after.
    if (this.#bulk) return record;
    this.changes.record(record.id);
    this.#order.replace(previous, record);
    this.events.emit('task:status', { id: record.id, status: record.status, previous: previous?.state });
    this.notify(record.id);
    return record;
  }

  remove(id: string): void {
    this.changes.record(id);
    const previous = this.#records.get(id);
    if (!previous) return;
    this.#link(previous, undefined);
    if (!this.#bulk) this.#order.replace(previous, undefined);
    this.#records.delete(id);
    this.events.emit('task:status', { id, status: null, previous: previous.state });
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
    return [...this.#records.values()].filter((r) => r.state !== undefined && !isTerminal(r.state));
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

  /** Records with a status in listing order, newest first (do not modify or keep the answer across awaits). */
  listed(): readonly TaskRecord[] {
    return this.#order.view();
  }

  /**
   * Every status, newest first (created_at, then task_id, descending), as JSON chunks taken from
   * each record's text: the order as of the call, never one string, and the event loop is free
   * between chunks (other requests wait ~1 ms, not the whole listing).
   */
  listing(): StreamedAnswer<TaskStatus[]> {
    return new StreamedAnswer(() => listingChunks(this.#order.snapshot(), (r) => this.jsonOf(r)));
  }

  /** A listed record's status JSON text (null without a status). */
  jsonOf(record: TaskRecord): string | null {
    if (record instanceof StoredRecord) return record.json();
    return record.status ? this.statusJson(record.status).json : null;
  }

  /** One status with its cached JSON text. */
  statusJson(status: TaskStatus): SerializedAnswer<TaskStatus> {
    let json = this.#json.get(status);
    if (json === undefined) this.#json.set(status, (json = JSON.stringify(status)));
    return new SerializedAnswer(status, json);
  }
}
