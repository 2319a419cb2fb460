import { writeJsonAtomic } from '../../../core/task-record/record-files.js';
import { isObject } from '../../../core/is-object.js';
import { readJsonObject } from '../../common/json-file.js';

/** A cached result: the Task and the run that produced it. */
export interface CacheEntry {
  readonly task_id: string;
  readonly run_id: string;
}

/** A Task answered from the cache: its run, and the Task and run it came from. */
export interface CacheHit {
  readonly run_id: string;
  readonly source_task_id: string;
  readonly source_run_id: string;
}

/** The file's shape (`<workspace>/.taskyard/result-cache.json`). */
interface StoreFile {
  /** key → the Task whose succeeded run answers it. */
  entries: Record<string, CacheEntry>;
  /** task_id → key of a cached Task's run still going: it becomes an entry if it succeeds. */
  pending: Record<string, string>;
  /** task_id → where a cache hit came from. */
  hits: Record<string, CacheHit>;
}

const isString = (v: unknown): v is string => typeof v === 'string';

/** The valid part of what the file held (a torn or hand-edited file loses only its bad entries). */
function parseStore(raw: Record<string, unknown> | null): StoreFile {
  const store: StoreFile = { entries: {}, pending: {}, hits: {} };
  const section = (name: string) => (raw && isObject(raw[name]) ? (raw[name] as Record<string, unknown>) : {});
  for (const [key, v] of Object.entries(section('entries'))) if (isObject(v) && isString(v['task_id']) && isString(v['run_id'])) store.entries[key] = { task_id: v['task_id'], run_id: v['run_id'] };
  for (const [id, key] of Object.entries(section('pending'))) if (isString(key)) store.pending[id] = key;
  for (const [id, v] of Object.entries(section('hits'))) {
    if (isObject(v) && isString(v['run_id']) && isString(v['source_task_id']) && isString(v['source_run_id'])) store.hits[id] = { run_id: v['run_id'], source_task_id: v['source_task_id'], source_run_id: v['source_run_id'] };
  }
  return store;
}

/**
 * The result cache's records in the service's private state directory (a Task cannot write
 * there): entries, runs that may become entries, and hits. Held in memory; each change is written
 * whole and atomically (temp file, rename), one write at a time, changes made meanwhile going out
 * in the next. Not flushed: a machine crash may lose the last changes, which costs a later submit
 * a run (or a hit its mark), never a wrong answer: every entry is checked against the Task's own
 * files at lookup. Only cached Tasks change it: other submits never touch it.
 */
export class CacheStore {
  readonly entries = new Map<string, CacheEntry>();
  readonly pending = new Map<string, string>();
  readonly hits = new Map<string, CacheHit>();
  /** task_id → the keys whose entry is that Task (deleting it drops them at once). */
  readonly #keysOf = new Map<string, Set<string>>();
  #writing: Promise<void> = Promise.resolve();
  #dirty = false;
  #closed = false;

  constructor(private readonly file: string) {}

  async load(): Promise<void> {
    const store = parseStore(await readJsonObject(this.file));
    for (const [key, entry] of Object.entries(store.entries)) this.setEntry(key, entry);
    for (const [id, key] of Object.entries(store.pending)) this.pending.set(id, key);
    for (const [id, hit] of Object.entries(store.hits)) this.hits.set(id, hit);
  }

  setEntry(key: string, entry: CacheEntry): void {
    const previous = this.entries.get(key);
    if (previous) this.#keysOf.get(previous.task_id)?.delete(key);
    this.entries.set(key, entry);
    let keys = this.#keysOf.get(entry.task_id);
    if (!keys) this.#keysOf.set(entry.task_id, (keys = new Set()));
    keys.add(key);
  }

  dropEntry(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.#keysOf.get(entry.task_id)?.delete(key);
  }

  /** Forgets everything about a Task that is gone; answers whether anything was forgotten. */
  forgetTask(id: string): boolean {
    const keys = [...(this.#keysOf.get(id) ?? [])];
    for (const key of keys) this.dropEntry(key);
    this.#keysOf.delete(id);
    const hit = this.hits.delete(id);
    const pending = this.pending.delete(id);
    return keys.length > 0 || hit || pending;
  }

  /** Writes the store soon (after the changes of this turn); answers when what it holds now is on disk. */
  save(): Promise<void> {
    if (this.#dirty || this.#closed) return this.#writing;
    this.#dirty = true;
    this.#writing = this.#writing.then(async () => {
      this.#dirty = false;
      const file: StoreFile = { entries: Object.fromEntries(this.entries), pending: Object.fromEntries(this.pending), hits: Object.fromEntries(this.hits) };
      await writeJsonAtomic(this.file, file, { durable: false }).catch((err: unknown) => console.error('taskyard: writing the result cache failed; it is written again at its next change', err));
    });
    return this.#writing;
  }

  /** The last write; a change after it (a run's end still being recorded) waits for the next start. */
  async close(): Promise<void> {
    await this.save();
    this.#closed = true;
  }
}
