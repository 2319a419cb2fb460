import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isTerminal } from '../../core/task-record/record-files.js';
import { deferExtraCaCerts } from '../../runner/extra-ca-certs.js';
import { collectGarbage } from '../common/collect-garbage.js';
import type { Config } from '../common/config.js';
import { ensurePrivateDir } from '../common/private-state.js';
import { STATE_DIR } from '../common/token-store.js';
import { DefinitionCatalog } from './definitions.js';
import type { Executor } from './engines/executor.js';
import { LocalExecutor } from './engines/local-executor.js';
import { LeaseFile } from './runs/lease-file.js';
import { ResourcePool, type Capacity } from './runs/resource-pool.js';
import { SlurmExecutor } from './engines/slurm-executor.js';
import { sweepInterruptedRuns } from './records/run-dir.js';
import { SpareRunDirs } from './records/spare-run-dirs.js';
import { Submitters } from './records/submitters.js';
import { RunTable } from './runs/run-table.js';
import type { LiveTask } from './follow/live-task.js';
import { parseTaskId } from './records/task-ids.js';
import { TaskIndex } from './records/task-index.js';
import type { TaskRecord } from './records/task-record.js';
import type { TaskResources } from '../../schemas/tasks.js';
import type { GpuLease } from '../../schemas/machine.js';
import { taskEnvironment } from './engines/task-environment.js';
import { runAsVariables, type RunAs } from '../common/run-as.js';
import { WorkspaceWatch } from './follow/workspace-watch.js';

/** The index file's name in the service's private directory. */
const INDEX_FILE = 'task-index';
/** Run directories kept made ahead of submits: one per submit in flight is plenty. */
const SPARE_RUN_DIRS = 2;

/**
 * Everything the task Jobs share: the definition catalog, the in-memory index of records, and
 * the table of runs this service owns (each run with its executor runner and its file watch).
 * Other capabilities (plugins, snapshots, metrics, machine) are given it by the composition root.
 */
export class Tasks {
  readonly workspace: string;
  readonly index: TaskIndex;
  /**
   * Resolves once the records taken from the index file at start are checked against their
   * directories (and any run found there taken over): Task Jobs wait for it, `/health` does not.
   */
  ready: Promise<void> = Promise.resolve();
  readonly catalog: DefinitionCatalog;
  readonly runs: RunTable;
  /** Run directories made ahead of submits. */
  readonly spareDirs: SpareRunDirs;
  /** Which token submitted each run. */
  readonly submitters: Submitters;
  readonly #pool: ResourcePool;
  readonly #executor: Executor;
  readonly #closing = new AbortController();
  readonly #poolDir: string;
  readonly #leaseFile: LeaseFile;
  #workspaceWatch: WorkspaceWatch | undefined;

  /** `capacity`: what the local executor may lease (see capacity.ts). */
  /** `runAs`: whom Task code runs as (`service.run_as`), or null. */
  constructor(workspace: string, config: Config, capacity: Capacity, runAs: RunAs | null = null) {
    this.workspace = workspace;
    this.index = new TaskIndex(workspace, join(workspace, STATE_DIR, INDEX_FILE));
    this.catalog = new DefinitionCatalog(workspace, config.tasks, runAsVariables(runAs));
    this.#poolDir = join(workspace, STATE_DIR, 'runners');
    this.spareDirs = new SpareRunDirs(join(workspace, STATE_DIR, 'spare-runs'), SPARE_RUN_DIRS);
    this.submitters = new Submitters(join(workspace, STATE_DIR, 'submitters.jsonl'));
    const slurm = config.executor.kind === 'slurm';
    // `run_as` is for runners started here (Slurm starts its jobs as the user who submits them).
    const env = deferExtraCaCerts(taskEnvironment({ ...config.environment, ...(slurm ? {} : runAsVariables(runAs)) }));
    this.#executor =
      config.executor.kind === 'slurm'
        ? new SlurmExecutor({ config: config.executor, env, scratch: join(workspace, STATE_DIR, 'slurm') })
        : new LocalExecutor({ env, poolDir: this.#poolDir, poolSize: config.service.runner_pool_size, graceMs: config.service.cancel_grace_ms });
    this.#pool = new ResourcePool(capacity);
    this.#leaseFile = new LeaseFile(join(workspace, STATE_DIR, 'leases.json'));
    this.runs = new RunTable({ index: this.index, executor: this.#executor, pool: this.#pool, leaseFile: this.#leaseFile, workspace, closing: this.#closing.signal, maxRunning: config.service.max_running_tasks });
  }

  /** Refuses at submit what the engine can never give (locally: more GPUs or CPUs than the machine has). */
  checkResources(task: string, resources: TaskResources): void {
    if (!this.#executor.queuesRuns) this.#pool.check(task, resources);
  }

  /**
   * Clears what an interrupted start or submit left, builds the index with one scan, keeps it
   * fresh by watching the workspace, and takes over or settles the runs a previous service left.
   */
  async start(): Promise<void> {
    await this.catalog.reload();
    await this.#clearPool();
    await this.spareDirs.start();
    await sweepInterruptedRuns(this.workspace, await this.index.scan());
    await this.submitters.start(this.index);
    this.#workspaceWatch = new WorkspaceWatch(this.index, (record) => {
      this.takeOver([record]).catch((err: unknown) => console.error(`taskyard: taking over ${record.id} failed`, err));
    });
    await this.takeOver(this.index.active());
    // A record the index file held that was rewritten while the service was down may be a run to take over.
    this.ready = this.index.checked
      .then(() => this.takeOver(this.index.active()))
      // The scan's garbage is given back at once instead of after a long idle spell.
      .then(collectGarbage)
      .catch((err: unknown) => console.error('taskyard: checking the index file against the workspace failed', err));
  }

  /**
   * Queued or running records this service does not own: those a previous service left at a
   * restart, and those another tool writes into the workspace later. Each is adopted (the engine
   * finds its live runner: a process naming its run, a Slurm job named beside the record)
   * or settled as lost, with the reason. Nothing stays `running` without a runner.
   */
  async takeOver(records: readonly TaskRecord[]): Promise<void> {
    const foreign = () => records.filter((r) => r.status && !isTerminal(r.status.state) && !this.runs.get(r.id));
    if (foreign().length === 0 || this.#closing.signal.aborted) return;
    const adopted = await this.#executor.adopt(foreign().map((r) => ({ runId: r.status!.run_id, dir: r.dir })));
    const leases = adopted.size > 0 ? await this.#leaseFile.read() : new Map<string, never>();
    const settling: Array<Promise<unknown>> = [];
    // Another event may have taken some of them over meanwhile: look again after the await.
    for (const record of foreign()) {
      const status = record.status!;
      if (this.index.get(record.id)?.status?.run_id !== status.run_id) continue;
      const spec = { id: record.id, parts: record.parts, dir: record.dir, runId: status.run_id, registration: record.parts.registration, module: '', resources: {} };
      const runner = adopted.get(status.run_id);
      if (runner) this.runs.take(spec, { kind: 'adopt', runner }, leases.get(status.run_id));
      else settling.push(this.runs.take(spec, { kind: 'lost', end: status.state === 'queued' ? null : { kind: 'lost', pid: status.pid } }).published);
    }
    // Settled before the service answers: nobody sees a lost run as running.
    await Promise.all(settling);
  }

  /** Re-describes plugin definitions (call after installing or removing a plugin). */
  reloadDefinitions(): Promise<void> {
    return this.catalog.reload();
  }

  /** Whether any Task of this registration name is queued or running under this service. */
  isRegistrationActive(registration: string): boolean {
    return this.runs.activeCount(registration) > 0;
  }

  /** The shared watcher of a running Task, if it runs here. */
  liveOf(id: string): LiveTask | undefined {
    return this.runs.get(id)?.live;
  }

  /**
   * Deletes terminal or metadata-only Tasks; active, claimed, unknown or invalid IDs are skipped.
   * Answers the IDs actually deleted, in the order asked.
   */
  async deleteTasks(ids: readonly string[]): Promise<string[]> {
    const deleted: string[] = [];
    for (const id of ids) {
      const record = parseTaskId(id) ? this.index.get(id) : undefined;
      if (!record || this.runs.get(id) || (record.status && !isTerminal(record.status.state))) continue;
      const release = this.index.claim([id]);
      if (!release) continue;
      try {
        await rm(record.dir, { recursive: true, force: true });
        this.index.remove(id);
        deleted.push(id);
      } catch (err) {
        console.error(`taskyard: deleting ${id} failed`, err);
      } finally {
        release();
      }
      // Whatever a failed removal left is what the index must show.
      if (!deleted.includes(id)) await this.index.load(id);
    }
    return deleted;
  }

  /** Stops watching and writes the index file; runners keep running (a restarted service adopts them). */
  async close(): Promise<void> {
    this.#closing.abort();
    this.#executor.close();
    this.spareDirs.close();
    this.#workspaceWatch?.close();
    await this.index.close();
    await this.submitters.close();
  }

  /** Slot logs of pooled runners that a previous service left (its idle runners are gone with it). */
  async #clearPool(): Promise<void> {
    await ensurePrivateDir(this.#poolDir);
    for (const name of await readdir(this.#poolDir)) await rm(join(this.#poolDir, name), { force: true, recursive: true });
  }

  /** Which run holds which GPU index (for `machine_status`). */
  gpuLeases(): GpuLease[] {
    return this.runs.gpuLeases();
  }

  /** Every record's state and its changes, for whoever keeps figures of them (the Task gauges). */
  statusFeed(): Pick<TaskIndex, 'all' | 'events'> {
    return this.index;
  }
}
