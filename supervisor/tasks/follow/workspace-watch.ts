import { lstatSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { isTerminal } from '../../../core/task-record/record-files.js';
import { TASK_TYPE } from '../../../core/task-record/id-rules.js';
import { parseTaskId } from '../records/task-ids.js';
import type { TaskIndex } from '../records/task-index.js';
import type { TaskRecord } from '../records/task-record.js';

/** How long a new, still empty Task directory is watched for its first record. */
const PENDING_WATCH_MS = 60_000;

/**
 * Directory checks that never throw: the entries a watch reports may be gone (or replaced by a
 * file) by the time they are looked at, and any process may create and remove them in a loop.
 */
function isDirectory(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    return false;
  }
}

function entriesOf(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function logFailure(what: string): (err: unknown) => void {
  return (err) => console.error(`taskyard: workspace watch: ${what} failed`, err);
}

/**
 * Keeps the index honest about Task directories that appear or vanish without the task Jobs
 * (workspace deletions, snapshot syncs, another tool): one `fs.watch` on the workspace root and
 * one per type directory, so the cost does not grow with the number of Tasks. Changes inside a
 * Task directory are the live-task watchers' business.
 */
export class WorkspaceWatch {
  readonly #index: TaskIndex;
  /** Told of every queued or running record found this way: nothing the service runs itself. */
  readonly #onActive: (record: TaskRecord) => void;
  readonly #root: FSWatcher | undefined;
  readonly #types = new Map<string, FSWatcher>();
  /** Task directories that appeared before their records were written, watched until they are. */
  readonly #pending = new Map<string, FSWatcher>();
  #closed = false;

  constructor(index: TaskIndex, onActive: (record: TaskRecord) => void) {
    this.#index = index;
    this.#onActive = onActive;
    this.#root = this.#open(index.workspace, (name) => this.#onRootEntry(name));
    for (const name of entriesOf(index.workspace)) if (isDirectory(join(index.workspace, name))) this.watchType(name);
  }

  /** Starts watching a type directory (idempotent; submit calls it for new types). */
  watchType(type: string): void {
    if (this.#closed || this.#types.has(type) || !TASK_TYPE.test(type)) return;
    const watcher = this.#open(join(this.#index.workspace, type), (name) => {
      if (parseTaskId(name)?.type === type) this.#loadTask(name).catch(logFailure(`reading ${name}`));
    });
    if (watcher) this.#types.set(type, watcher);
  }

  close(): void {
    this.#closed = true;
    for (const w of this.#pending.values()) w.close();
    this.#pending.clear();
    this.#root?.close();
    for (const w of this.#types.values()) w.close();
    this.#types.clear();
  }

  /**
   * Loads a Task directory that appeared or vanished. One created from outside usually gets its
   * record a moment later, which the type directory's watch does not see: watch it until then.
   */
  async #loadTask(id: string): Promise<void> {
    // Whoever holds a claim (submit, delete, a snapshot) settles the record itself.
    if (this.#index.isClaimed(id)) return;
    const parts = parseTaskId(id)!;
    const dir = join(this.#index.workspace, parts.type, id);
    // Most events are the service's own submits: an active record (its watcher reads it) whose
    // directory is there needs no second read.
    const known = this.#index.get(id)?.status;
    if (known && !isTerminal(known.state) && isDirectory(dir)) return;
    const record = await this.#load(id);
    if (record || this.#closed || this.#pending.has(id) || !isDirectory(dir)) return;
    const watcher = this.#open(dir, () => {
      this.#load(id).then((loaded) => {
        if (loaded) this.#stopPending(id);
      }, logFailure(`reading ${id}`));
    });
    if (!watcher) return;
    this.#pending.set(id, watcher);
    setTimeout(() => this.#stopPending(id), PENDING_WATCH_MS).unref();
    // A record written between the read above and the watch starting raised no event: read again.
    if (await this.#load(id)) this.#stopPending(id);
  }

  async #load(id: string): Promise<TaskRecord | undefined> {
    const record = await this.#index.load(id);
    if (record?.status && !isTerminal(record.status.state) && !this.#closed) this.#onActive(record);
    return record;
  }

  #stopPending(id: string): void {
    this.#pending.get(id)?.close();
    this.#pending.delete(id);
  }

  #open(dir: string, onEntry: (name: string) => void): FSWatcher | undefined {
    try {
      const watcher = watch(dir, (_event, name) => {
        if (typeof name === 'string' && name) onEntry(name);
      });
      // The directory went away: stop, and let the root watch notice (or a later submit re-watch).
      watcher.on('error', () => {
        watcher.close();
        for (const [type, w] of this.#types) if (w === watcher) this.#types.delete(type);
      });
      return watcher;
    } catch {
      return undefined;
    }
  }

  /** A type directory appeared or vanished: watch it, or forget the records it held. */
  #onRootEntry(type: string): void {
    if (!TASK_TYPE.test(type)) return;
    const exists = isDirectory(join(this.#index.workspace, type));
    if (exists === this.#types.has(type)) return;
    this.#types.get(type)?.close();
    this.#types.delete(type);
    if (exists) {
      this.watchType(type);
      for (const entry of entriesOf(join(this.#index.workspace, type))) if (parseTaskId(entry)?.type === type) this.#loadTask(entry).catch(logFailure(`reading ${entry}`));
    } else {
      for (const record of [...this.#index.all()]) if (record.parts.type === type) this.#index.load(record.id).catch(logFailure(`reading ${record.id}`));
    }
  }
}
