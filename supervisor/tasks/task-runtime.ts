import { rm } from 'node:fs/promises';
import { isTerminal } from '../../workers/task-runner/record-files.js';
import type { Config } from '../config.js';
import { DefinitionCatalog } from './definitions.js';
import { Launcher, type RunRequest } from './launcher.js';
import { LiveTask } from './live-task.js';
import { parseTaskId } from './task-ids.js';
import { TaskIndex, type TaskRecord } from './task-index.js';
import { WorkspaceWatch } from './workspace-watch.js';
import { adoptOrSettle } from './adopt.js';

/**
 * Everything the task Jobs share: the definition catalog, the in-memory index of records, the
 * launcher of workers and one LiveTask (file watch) per active record. Other capabilities (the
 * plugin installer) reach it through `taskRuntimeOf(env)`.
 */
export class TaskRuntime {
  readonly workspace: string;
  readonly index: TaskIndex;
  readonly catalog: DefinitionCatalog;
  readonly launcher: Launcher;
  readonly #live = new Map<string, LiveTask>();
  /** Foreign active records being adopted or settled right now. */
  readonly #settling = new Set<string>();
  #workspaceWatch: WorkspaceWatch | undefined;

  constructor(workspace: string, config: Config) {
    this.workspace = workspace;
    this.index = new TaskIndex(workspace);
    this.catalog = new DefinitionCatalog(workspace);
    this.launcher = new Launcher({ workspace, index: this.index, maxRunning: config.service.max_running_tasks, environment: config.environment });
  }

  /** Builds the index with one scan, then keeps it fresh by watching the workspace. */
  async start(): Promise<void> {
    await this.catalog.reload();
    await this.index.scan();
    this.#workspaceWatch = new WorkspaceWatch(this.index, (record) => void this.#settleForeign(record));
  }

  /** A queued or running record that appeared from outside: adopted, or settled as lost. */
  async #settleForeign(record: TaskRecord): Promise<void> {
    if (this.launcher.isManaged(record.id) || this.#settling.has(record.id)) return;
    this.#settling.add(record.id);
    try {
      await adoptOrSettle(this, [record]);
    } finally {
      this.#settling.delete(record.id);
    }
  }

  /** Re-describes plugin definitions (call after installing or removing a plugin). */
  reloadDefinitions(): Promise<void> {
    return this.catalog.reload();
  }

  /** Whether any Task of this registration name is queued or running under this service. */
  isRegistrationActive(registration: string): boolean {
    return this.launcher.activeCount(registration) > 0;
  }

  /** Starts a run whose queued record is written; the record is watched until it settles. */
  launch(req: RunRequest): Promise<boolean> {
    this.#workspaceWatch?.watchType(req.parts.type);
    // Watched before the worker is asked for, so the watch sees all it writes and the record as
    // the service just wrote it needs no first read.
    const record = this.index.get(req.id);
    if (record) this.watch(record, { unread: false });
    return this.launcher.submit(req);
  }

  /**
   * The shared watcher of an active record (created on demand), or undefined once it is terminal.
   * `unread: false` when nothing can have changed in the directory since the record was read.
   */
  watch(record: TaskRecord, { unread = true } = {}): LiveTask | undefined {
    if (!record.status || isTerminal(record.status.state)) return undefined;
    let live = this.#live.get(record.id);
    if (live && live.runId !== record.status.run_id) live.close();
    if (!live || live.closed) {
      live = new LiveTask(this.index, record, unread, () => {
        if (this.#live.get(record.id) === live) this.#live.delete(record.id);
      });
      this.#live.set(record.id, live);
    }
    return live;
  }

  liveOf(id: string): LiveTask | undefined {
    const record = this.index.get(id);
    return record ? this.watch(record) : undefined;
  }

  /**
   * Deletes terminal or metadata-only Tasks; active, managed, unknown or invalid IDs are skipped.
   * Answers the IDs actually deleted, in the order asked.
   */
  async deleteTasks(ids: readonly string[]): Promise<string[]> {
    const deleted: string[] = [];
    for (const id of ids) {
      const record = parseTaskId(id) ? this.index.get(id) : undefined;
      if (!record || this.index.claims.has(id) || this.launcher.isManaged(id)) continue;
      if (record.status && !isTerminal(record.status.state)) continue;
      this.index.claims.add(id);
      try {
        await rm(record.dir, { recursive: true, force: true });
        this.index.remove(id);
        deleted.push(id);
      } finally {
        this.index.claims.delete(id);
      }
    }
    return deleted;
  }

  /** Stops watching; workers keep running (a restarted service adopts them). */
  close(): void {
    this.launcher.close();
    this.#workspaceWatch?.close();
    for (const live of this.#live.values()) live.close();
    this.#live.clear();
  }
}
