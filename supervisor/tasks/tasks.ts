import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isTerminal, TASK_FILES } from '../../core/task-record/record-files.js';
import { FileExistsError, KeyError } from '../../core/errors.js';
import type { JobContext } from '../../core/job.js';
import type { SerializedAnswer, StreamedAnswer } from '../../schemas/job-response.js';
import type { QueryTaskStatusesInput, TaskDefinition, TaskHandle, TaskLogChunk, TaskResources, TaskStatus, TaskStatusPage } from '../../schemas/tasks.js';
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
import { readLogWindow } from './follow/log-reader.js';
import { streamTask, waitAtMost, waitForTerminal, type FollowParts } from './follow.js';
import type { Lineage } from './graph.js';
import type { TaskEvents } from './records/task-events.js';
import { queryStatuses } from './status-query.js';
import { runResources, submitTask, type SubmitParts } from './submit.js';
import { earlierRunIds, runHistory } from './records/run-history.js';
import type { TaskRuns } from '../../schemas/task-runs.js';
import { followTaskMetrics, readTaskMetrics } from './task-metrics.js';
import { contextOf, lineageOf, type TaskContext } from './task-context.js';
import { parseTaskId } from './records/task-ids.js';
import { TaskIndex } from './records/task-index.js';
import type { TaskRecord } from './records/task-record.js';
import type { TaskMetricsChunk } from '../../schemas/task-metrics.js';
import { readTaskColumns } from './task-columns.js';
import { taskEnvironment } from './engines/task-environment.js';
import { runAsVariables, type RunAs } from '../common/run-as.js';
import { WorkspaceWatch } from './follow/workspace-watch.js';
import { ResultCache } from './cache/result-cache.js';
import { RunFactsReader, type PageFacts, type RunFacts } from './run-facts.js';

/** The index file's name in the service's private directory. */
const INDEX_FILE = 'task-index';
/** Run directories kept made ahead of submits: one per submit in flight is plenty. */
const SPARE_RUN_DIRS = 2;

/**
 * The Tasks front door: every Task Job, and every other capability (the plugin installer,
 * snapshots, metrics, machine status), goes through these methods and never reaches its parts:
 * the definition catalog, the in-memory index of records, the table of runs this service owns
 * (each with its executor runner and its file watch), the spare run directories and who
 * submitted each run. Operation bodies live in the facade-level modules (submit.ts, follow.ts,
 * status-query.ts, task-context.ts), which take the narrow parts they use.
 *
 * An operation that fails on its arguments (an unknown Task) throws the spec's error; the Jobs
 * call them from async functions, so that error is their rejection.
 */
export class Tasks {
  readonly workspace: string;
  /**
   * Resolves once the records taken from the index file at start are checked against their
   * directories (and any run found there taken over): Task Jobs wait for it, `/health` does not.
   */
  ready: Promise<void> = Promise.resolve();
  readonly #index: TaskIndex;
  readonly #catalog: DefinitionCatalog;
  readonly #runs: RunTable;
  /** Run directories made ahead of submits. */
  readonly #spareDirs: SpareRunDirs;
  /** Which token submitted each run. */
  readonly #submitters: Submitters;
  /** The parts as submit and follow take them, made once (a call allocates no view of them). */
  readonly #submitParts: SubmitParts;
  readonly #followParts: FollowParts;
  readonly #pool: ResourcePool;
  readonly #executor: Executor;
  readonly #closing = new AbortController();
  readonly #poolDir: string;
  readonly #leaseFile: LeaseFile;
  readonly #cache: ResultCache;
  readonly #facts: RunFactsReader;
  #workspaceWatch: WorkspaceWatch | undefined;

  /** `capacity`: what the local executor may lease (capacity.ts); `runAs`: whom Task code runs as (`service.run_as`), or null; `commandTask`: whether the catalog offers `command` (it runs any program: only where a token guards the service, as `shell`). */
  constructor(workspace: string, config: Config, capacity: Capacity, runAs: RunAs | null = null, commandTask = false) {
    this.workspace = workspace;
    this.#index = new TaskIndex(workspace, join(workspace, STATE_DIR, INDEX_FILE));
    this.#catalog = new DefinitionCatalog(workspace, config.tasks, runAsVariables(runAs), commandTask);
    this.#poolDir = join(workspace, STATE_DIR, 'runners');
    this.#spareDirs = new SpareRunDirs(join(workspace, STATE_DIR, 'spare-runs'), SPARE_RUN_DIRS);
    this.#submitters = new Submitters(join(workspace, STATE_DIR, 'submitters.jsonl'));
    const slurm = config.executor.kind === 'slurm';
    // `run_as` is for runners started here (Slurm starts its jobs as the user who submits them).
    const env = deferExtraCaCerts(taskEnvironment({ ...config.environment, ...(slurm ? {} : runAsVariables(runAs)) }));
    this.#executor =
      config.executor.kind === 'slurm'
        ? new SlurmExecutor({ config: config.executor, env, scratch: join(workspace, STATE_DIR, 'slurm') })
        : new LocalExecutor({ env, poolDir: this.#poolDir, poolSize: config.service.runner_pool_size, graceMs: config.service.cancel_grace_ms });
    this.#pool = new ResourcePool(capacity);
    this.#leaseFile = new LeaseFile(join(workspace, STATE_DIR, 'leases.json'));
    const catalog = this.#catalog;
    this.#runs = new RunTable({
      index: this.#index,
      executor: this.#executor,
      pool: this.#pool,
      leaseFile: this.#leaseFile,
      workspace,
      closing: this.#closing.signal,
      maxRunning: config.service.max_running_tasks,
      definitionOf(registration, inputs) {
        const entry = catalog.get(registration);
        return entry && { module: entry.module, resources: runResources(entry.definition, inputs), retries: entry.definition.retries };
      },
    });
    const pool = this.#pool;
    // Locally, what the machine can never give (more GPUs or CPUs than it has) is refused at submit; Slurm queues it.
    const checkResources = this.#executor.queuesRuns ? () => undefined : (task: string, resources: TaskResources) => pool.check(task, resources);
    this.#cache = new ResultCache(join(workspace, STATE_DIR), this.#index, this.#catalog.pluginsDir);
    this.#facts = new RunFactsReader(this.#submitters, this.#cache);
    this.#submitParts = { workspace, catalog: this.#catalog, index: this.#index, runs: this.#runs, spareDirs: this.#spareDirs, submitters: this.#submitters, cache: this.#cache, checkResources };
    this.#followParts = { index: this.#index, runs: this.#runs };
  }

  /**
   * Clears what an interrupted start or submit left, builds the index with one scan, keeps it
   * fresh by watching the workspace, and takes over or settles the runs a previous service left.
   */
  async start(): Promise<void> {
    await this.#catalog.reload();
    await this.#clearPool();
    await this.#spareDirs.start();
    await sweepInterruptedRuns(this.workspace, await this.#index.scan());
    await this.#submitters.start(this.#index);
    await this.#cache.start();
    this.#workspaceWatch = new WorkspaceWatch(this.#index, (record) => {
      this.#takeOver([record]).catch((err: unknown) => console.error(`taskyard: taking over ${record.id} failed`, err));
    });
    await this.#takeOver(this.#index.active());
    // A record the index file held that was rewritten while the service was down may be a run to take over.
    this.ready = this.#index.checked
      .then(() => this.#takeOver(this.#index.active()))
      // The scan's garbage is given back at once instead of after a long idle spell.
      .then(collectGarbage)
      .catch((err: unknown) => console.error('taskyard: checking the index file against the workspace failed', err));
  }

  // --- Definitions ---

  /** Every installed definition, sorted by registration name (a plugin's broken definition fails it). */
  definitions(): TaskDefinition[] {
    return this.#catalog.list();
  }

  /** One definition by registration name, or the ValueError listing the available names. */
  definition(task: string): TaskDefinition {
    return this.#catalog.require(task).definition;
  }

  /** Re-describes plugin definitions (call after installing or removing a plugin). */
  reloadDefinitions(): Promise<void> {
    return this.#catalog.reload();
  }

  /** A catalog of the plugin prefix under `root` (a staged change), described as the live one is. */
  stagedCatalog(root: string): DefinitionCatalog {
    return new DefinitionCatalog(root, {}, this.#catalog.describerEnv, this.#catalog.commandTask);
  }

  /** Takes over a staged catalog's description once its prefix was moved from `from` to `to` (DefinitionCatalog.adopt). */
  adoptDefinitions(staged: DefinitionCatalog, from: string, to: string): void {
    this.#catalog.adopt(staged, from, to);
  }

  /** Problems the live catalog found describing the installed plugins (what a broken definition fails the listing with). */
  definitionErrors(): readonly string[] {
    return this.#catalog.errors;
  }

  /** Registration names a plugin's definitions have in the live catalog. */
  registrationsOf(plugin: string): string[] {
    return this.#catalog.registrationsOf(plugin);
  }

  // --- Runs ---

  /** `submit`; `submitter`: the caller's token name, noted with the run; `noCache`: run even when the result cache answers. */
  submit(task: string, inputs: Record<string, unknown>, submitter: string | undefined, noCache = false): Promise<TaskHandle> {
    return submitTask(this.#submitParts, task, inputs, submitter, noCache);
  }

  /** Cancels a queued or running Task: true only when this call cancelled it; an unknown Task is a KeyError. */
  cancel(id: string): Promise<boolean> {
    if (!this.#index.get(id) && !this.#runs.get(id)) throw new KeyError(`Unknown task ${id}`);
    return this.#runs.cancel(id);
  }

  /**
   * Deletes terminal or metadata-only Tasks; active, claimed, unknown or invalid IDs are skipped.
   * Answers the IDs actually deleted, in the order asked.
   */
  async delete(ids: readonly string[]): Promise<string[]> {
    const deleted: string[] = [];
    for (const id of ids) {
      const record = parseTaskId(id) ? this.#index.get(id) : undefined;
      if (!record || this.#runs.get(id) || (record.status && !isTerminal(record.status.state))) continue;
      const release = this.#index.claim([id]);
      if (!release) continue;
      try {
        await rm(record.dir, { recursive: true, force: true });
        this.#index.remove(id);
        deleted.push(id);
      } catch (err) {
        console.error(`taskyard: deleting ${id} failed`, err);
      } finally {
        release();
      }
      // Whatever a failed removal left is what the index must show.
      if (!deleted.includes(id)) await this.#index.load(id);
    }
    return deleted;
  }

  /** Whether any Task of this registration name is queued or running under this service. */
  isRegistrationActive(registration: string): boolean {
    return this.#runs.activeCount(registration) > 0;
  }

  /** What runs on this machine now, for machine_status and the machine history: GPU leases, runner processes. */
  get running(): Pick<RunTable, 'gpuLeases' | 'runnerProcesses'> {
    return this.#runs;
  }

  // --- Waits and streams ---

  /** Until the Task is terminal (spec: wait_task); with `runId`, another current execution fails. */
  wait(id: string, runId: string | undefined, pollMs: number, signal: AbortSignal): Promise<TaskStatus> {
    return waitForTerminal(this.#followParts, id, runId, pollMs, signal);
  }

  /** At most `timeoutMs`, then the status as it is (spec: await_task). */
  waitAtMost(id: string, runId: string | undefined, pollMs: number, timeoutMs: number, signal: AbortSignal): Promise<TaskStatus> {
    return waitAtMost(this.#followParts, id, runId, pollMs, timeoutMs, signal);
  }

  /** Steps and log lines as events to `ctx` until the Task stops, then its status (follow.ts). */
  follow(id: string, runId: string | undefined, pollMs: number, ctx: JobContext): Promise<TaskStatus> {
    return streamTask(this.#followParts, id, runId, pollMs, ctx);
  }

  // --- Queries ---

  /** A status as an answer, with its cached JSON text: every waiter and follower of a Task answers the same text. */
  answerOf(status: TaskStatus): SerializedAnswer<TaskStatus> {
    return this.#index.statusJson(status);
  }

  /**
   * The JSON text of a Task's status, and who submitted its current run when known (one lookup
   * serves both: status is polled hard); an unknown Task, or one with metadata only, is a KeyError.
   */
  statusText(id: string): { json: string; meta: RunFacts } {
    const record = this.#index.get(id);
    const json = record && this.#index.jsonOf(record);
    if (!json) throw new KeyError(record ? `task ${id} has metadata but no status record` : `Unknown task ${id}`);
    return { json, meta: this.#facts.of(record!) };
  }

  /** IDs of the Tasks that have a status, sorted. */
  taskIds(): string[] {
    return this.#index.listed().map((r) => r.id).sort();
  }

  /** Every status, newest first, written in chunks. */
  listStatuses(): StreamedAnswer<TaskStatus[]> {
    return this.#index.listing();
  }

  /** `query_task_statuses`: the page, and who submitted each Task it shows (when known). */
  queryStatuses(query: QueryTaskStatusesInput): { page: SerializedAnswer<TaskStatusPage>; facts: PageFacts } {
    const shown: TaskRecord[] = [];
    const page = queryStatuses(this.#index, query, shown);
    return { page, facts: this.#facts.ofPage(shown) };
  }

  /** A window of a Task's log by byte offsets (read_task_log); an unknown Task is a KeyError. */
  readLog(id: string, offset: number, limit: number): Promise<TaskLogChunk> {
    const record = this.#index.get(id);
    if (!record) throw new KeyError(`Unknown task ${id}`);
    return readLogWindow(`${record.dir}/${TASK_FILES.log}`, offset, limit);
  }

  /** The metric points of a Task after byte `cursor` of its metrics.jsonl, one bounded window (read_task_metrics). */
  readMetrics(id: string, cursor: number, maxPoints: number): Promise<TaskMetricsChunk> {
    return readTaskMetrics(this.#index, id, cursor, maxPoints);
  }

  /** Metric windows as `metrics` events to `ctx` until the Task has ended (read_task_metrics over SSE). */
  followMetrics(id: string, cursor: number, maxPoints: number, pollMs: number, ctx: JobContext): Promise<TaskMetricsChunk> {
    return followTaskMetrics(this.#index, id, cursor, maxPoints, pollMs, ctx);
  }

  /** Chosen input, output and final-metric values of Tasks (read_task_columns). */
  readonly columns = (q: Parameters<typeof readTaskColumns>[1]) => readTaskColumns(this.#index, q);

  /** The runs of a Task's submission, oldest first (get_task_runs); an unknown Task is a KeyError. */
  async runHistory(id: string): Promise<TaskRuns> {
    const record = this.#index.get(id);
    if (!record?.status) throw new KeyError(record ? `task ${id} has metadata but no status record` : `Unknown task ${id}`);
    return { task_id: id, runs: await runHistory(record.dir, `${record.parts.type}/${id}`, record.status) };
  }

  /** The lineage graph of a known Task. */
  graph(id: string): Lineage {
    return lineageOf(this.#index, id);
  }

  /** A Task with its status, locations, lineage and relations (get_task_context). */
  context(id: string): TaskContext {
    return contextOf(this.#index, this.#facts, id);
  }

  /** Every record (gauges count them once at start). */
  all(): IterableIterator<TaskRecord> {
    return this.#index.all();
  }

  /** The typed feed of status, progress and log changes. */
  get events(): TaskEvents {
    return this.#index.events;
  }

  // --- Snapshots ---

  /** Holds Tasks against submit and delete while a snapshot replaces them; a claimed one is a FileExistsError. */
  hold(ids: readonly string[]): () => void {
    const release = this.#index.claim(ids);
    if (!release) throw new FileExistsError(`Task ${ids.find((id) => this.#index.isClaimed(id))} is being submitted or deleted right now`);
    return release;
  }

  /** Whether this service manages the Task's runner or its record on disk is not terminal. */
  async isActive(id: string): Promise<boolean> {
    if (this.#runs.get(id)) return true;
    const record = await this.#index.load(id);
    return record?.status ? !isTerminal(record.status.state) : false;
  }

  /** Reads these Tasks' records from disk again (after a snapshot changed their directories). */
  async reloadRecords(ids: readonly string[]): Promise<void> {
    for (const id of ids) await this.#index.load(id);
  }

  /** Stops watching and writes the index file; runners keep running (a restarted service adopts them). */
  async close(): Promise<void> {
    this.#closing.abort();
    this.#executor.close();
    this.#spareDirs.close();
    this.#workspaceWatch?.close();
    await this.#index.close();
    await this.#submitters.close();
    await this.#cache.close();
  }

  /**
   * Queued or running records this service does not own: those a previous service left at a
   * restart, and those another tool writes into the workspace later. Each is adopted (the engine
   * finds its live runner: a process naming its run, a Slurm job named beside the record)
   * or settled as lost, with the reason. Nothing stays `running` without a runner.
   */
  async #takeOver(records: readonly TaskRecord[]): Promise<void> {
    const foreign = () => records.filter((r) => r.status && !isTerminal(r.status.state) && !this.#runs.get(r.id));
    if (foreign().length === 0 || this.#closing.signal.aborted) return;
    const adopted = await this.#executor.adopt(foreign().map((r) => ({ runId: r.status!.run_id, dir: r.dir })));
    const leases = adopted.size > 0 ? await this.#leaseFile.read() : new Map<string, never>();
    // What found runs that may be retried used already: a restart counts their attempts on.
    const earlier = await earlierRunIds(foreign().filter((r) => this.#catalog.get(r.parts.registration)?.definition.retries));
    const settling: Array<Promise<unknown>> = [];
    // Another event may have taken some of them over meanwhile: look again after the await.
    for (const record of foreign()) {
      const status = record.status!;
      if (this.#index.get(record.id)?.status?.run_id !== status.run_id) continue;
      const before = earlier.get(record.id)?.filter((runId) => runId !== status.run_id) ?? [];
      const spec = { id: record.id, parts: record.parts, dir: record.dir, runId: status.run_id, registration: record.parts.registration, module: '', resources: {}, attempt: before.length + 1, earlier: before };
      const runner = adopted.get(status.run_id);
      if (runner) this.#runs.take(spec, { kind: 'adopt', runner }, leases.get(status.run_id));
      else settling.push(this.#runs.take(spec, { kind: 'lost', end: status.state === 'queued' ? null : { kind: 'lost', pid: status.pid } }).published);
    }
    // Settled before the service answers: nobody sees a lost run as running.
    await Promise.all(settling);
  }

  /** Slot logs of pooled runners that a previous service left (its idle runners are gone with it). */
  async #clearPool(): Promise<void> {
    await ensurePrivateDir(this.#poolDir);
    for (const name of await readdir(this.#poolDir)) await rm(join(this.#poolDir, name), { force: true, recursive: true });
  }
}
