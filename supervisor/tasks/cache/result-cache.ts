import { join } from 'node:path';
import { nowIso, toJsonText, writeJsonAtomic } from '../../../core/task-record/record-files.js';
import type { TaskDefinition, TaskStatus } from '../../../schemas/tasks.js';
import { readJsonObject } from '../../common/json-file.js';
import { readMetadata } from '../records/records.js';
import type { TaskIndex } from '../records/task-index.js';
import type { TaskIdParts } from '../records/task-ids.js';
import type { TaskRecord } from '../records/task-record.js';
import { submitKeyOf } from './cache-key.js';
import { CacheStore } from './cache-store.js';
import { createHitDir, type HitSource } from './hit-dir.js';

/** The file a cached Task's succeeded run carries in its directory: the key it answers, and the run. */
export const CACHE_KEY_FILE = 'cache-key.json';

/** The Task a hit becomes: its ID, parts, directory and the status it would have had queued. */
export interface HitRequest {
  readonly id: string;
  readonly parts: TaskIdParts;
  readonly dir: string;
  readonly status: TaskStatus;
}

/**
 * The result cache (issue 31): a submit of a Task whose definition or config says `cache: true`
 * is keyed (cache-key.ts); a key that a succeeded Task still present answers makes a new Task at
 * once (hit-dir.ts), published like a run's end; otherwise the run, once succeeded, answers that
 * key from then on. An entry is checked at every lookup (the Task is there, succeeded, the same
 * run, its key file the same key), and forgotten as soon as the Task is deleted.
 */
export class ResultCache {
  readonly #store: CacheStore;
  readonly #unsubscribe: Array<() => void> = [];
  /** Key files being written, by Task: a lookup of that Task waits for its file. */
  readonly #keyFiles = new Map<string, Promise<void>>();

  constructor(
    stateDir: string,
    private readonly index: TaskIndex,
    private readonly pluginsDir: string,
  ) {
    this.#store = new CacheStore(join(stateDir, 'result-cache.json'));
  }

  /** Reads the store, keeps what the workspace still holds, and follows ends and deletions. */
  async start(): Promise<void> {
    const store = this.#store;
    await store.load();
    for (const [key, entry] of store.entries) if (this.index.get(entry.task_id)?.status?.run_id !== entry.run_id) store.dropEntry(key);
    for (const [id, hit] of store.hits) if (this.index.get(id)?.status?.run_id !== hit.run_id) store.hits.delete(id);
    // Runs that ended while no service watched them: a succeeded one becomes an entry now.
    for (const [id, key] of store.pending) {
      const status = this.index.get(id)?.status;
      if (status?.state === 'succeeded') await this.#enter(id, key, status);
      else if (!status || status.state === 'failed' || status.state === 'cancelled') store.pending.delete(id);
    }
    this.#unsubscribe.push(
      this.index.events.on('task:ended', ({ id, status }) => void this.#ended(id, status)),
      this.index.events.on('task:status', ({ id, status }) => this.#changed(id, status)),
    );
    await store.save();
  }

  /** The key of a submit of a cached Task, or null when it cannot be keyed now (cache-key.ts). */
  keyOf(definition: TaskDefinition, config: Record<string, unknown>, sources: readonly string[]): Promise<string | null> {
    return submitKeyOf(definition, config, sources, this.index, this.pluginsDir);
  }

  /**
   * Answers `key` from the cache as the new Task `request` (its ID claimed by the caller): the
   * succeeded status it was given, or null on a miss (the caller runs it).
   */
  async answer(key: string, request: HitRequest): Promise<TaskStatus | null> {
    const source = await this.#valid(key);
    if (!source) return null;
    const at = nowIso();
    const result = JSON.parse(toJsonText(source.metadata.output_params)) as Record<string, unknown>;
    const status: TaskStatus = { ...request.status, state: 'succeeded', created_at: at, started_at: at, finished_at: at, result };
    const metadata = { task_id: request.id, reg_name: status.task_name, created_at: at, task_type: status.task_type, input_params: status.config, output_params: source.metadata.output_params };
    try {
      await createHitDir(source, { dir: request.dir, status, metadata });
    } catch (err) {
      console.error(`taskyard: answering ${request.id} from the result cache (Task ${source.task_id}) failed; it runs instead`, err);
      return null;
    }
    // A fixed name may replace a Task the cache knew: what it knew of that one is gone with it.
    this.#store.forgetTask(request.id);
    this.#store.hits.set(request.id, { run_id: status.run_id, source_task_id: source.task_id, source_run_id: source.run_id });
    void this.#store.save();
    this.index.setStatus(request.id, request.parts, status, true);
    this.index.events.emit('task:ended', { id: request.id, status });
    return status;
  }

  /** A run of a cached Task was submitted under `key`: once it succeeds, it answers that key. */
  expect(id: string, key: string): void {
    this.#store.hits.delete(id);
    this.#store.pending.set(id, key);
    void this.#store.save();
  }

  /** The Task a record's current run was answered from, when it is a cache hit. */
  cachedFrom(record: TaskRecord): string | undefined {
    const hit = this.#store.hits.get(record.id);
    return hit && hit.run_id === record.status?.run_id ? hit.source_task_id : undefined;
  }

  async close(): Promise<void> {
    for (const off of this.#unsubscribe.splice(0)) off();
    await this.#store.close();
  }

  /** The entry's Task when it still answers `key`; an entry that does not is dropped. */
  async #valid(key: string): Promise<HitSource | null> {
    const entry = this.#store.entries.get(key);
    if (!entry) return null;
    const record = this.index.get(entry.task_id);
    const ok = record?.status?.state === 'succeeded' && record.status.run_id === entry.run_id && record.hasMetadata;
    if (ok) await this.#keyFiles.get(entry.task_id);
    const marked = ok ? await readJsonObject(join(record.dir, CACHE_KEY_FILE)) : null;
    const metadata = marked?.['key'] === key && marked['run_id'] === entry.run_id ? await readMetadata(record!.dir, entry.task_id) : null;
    if (metadata) return { task_id: entry.task_id, run_id: entry.run_id, dir: record!.dir, metadata };
    this.#store.dropEntry(key);
    void this.#store.save();
    return null;
  }

  /**
   * A record changed: a removed Task is forgotten; a cached run found succeeded becomes an entry
   * (one that ended while no service watched is read at start: its end is not announced). Two
   * map lookups at most: every status change of every Task passes here.
   */
  #changed(id: string, status: TaskStatus | null): void {
    if (status === null) {
      if (this.#store.forgetTask(id)) void this.#store.save();
    } else if (status.state === 'succeeded' && this.#store.pending.has(id)) {
      void this.#ended(id, status);
    }
  }

  /** A run ended for good: a cached run that succeeded answers its key; any other end forgets it. */
  async #ended(id: string, status: TaskStatus): Promise<void> {
    const key = this.#store.pending.get(id);
    if (key === undefined) return;
    if (status.state === 'succeeded') await this.#enter(id, key, status);
    else this.#store.pending.delete(id);
    await this.#store.save();
  }

  /**
   * The succeeded run answers `key`. The entry is made at once, in the same turn as the run's end
   * is published (a submit right after a wait finds it); a lookup waits for its key file.
   */
  async #enter(id: string, key: string, status: TaskStatus): Promise<void> {
    this.#store.pending.delete(id);
    const record = this.index.get(id);
    if (!record || record.status?.run_id !== status.run_id) return;
    this.#store.setEntry(key, { task_id: id, run_id: status.run_id });
    const written = writeJsonAtomic(join(record.dir, CACHE_KEY_FILE), { key, run_id: status.run_id }).catch((err: unknown) => {
      console.error(`taskyard: ${id} succeeded but its result cache key could not be written; it is not a cached result`, err);
    });
    this.#keyFiles.set(id, written);
    await written;
    if (this.#keyFiles.get(id) === written) this.#keyFiles.delete(id);
  }
}
