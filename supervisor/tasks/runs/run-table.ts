import { randomUUID } from 'node:crypto';
import type { GpuLease } from '../../../schemas/machine.js';
import type { TaskResources, TaskRetries, TaskStatus } from '../../../schemas/tasks.js';
import { nowIso } from '../../../core/task-record/record-files.js';
import { archiveAttempt } from '../records/run-history.js';
import type { Executor } from '../engines/executor.js';
import type { LeaseFile } from './lease-file.js';
import type { Lease, ResourcePool } from './resource-pool.js';
import type { TaskIndex } from '../records/task-index.js';
import { retryDelay, type FailureCause } from './retry-policy.js';
import { TaskRun, type RunHost, type RunSpec, type RunStart } from './task-run.js';

/** What a registration's definition says now of its next run: where its code is, what it holds, its retry policy. */
export interface RunDefinition {
  readonly module: string;
  readonly resources: TaskResources;
  readonly retries: TaskRetries | undefined;
}

/** A run's runner process on this machine. */
export interface RunnerProcess {
  readonly taskId: string;
  readonly runId: string;
  readonly pid: number;
}

/** A new run ID (also a submit's). */
export function newRunId(): string {
  return randomUUID().replaceAll('-', '');
}

/**
 * Every run this service owns until its terminal state is published, and admission. Locally a
 * queued run starts when a slot is free (`max_running_tasks`) and its CPUs and GPUs are free,
 * strictly in submission order; waiting costs nothing (no timer, no watch). An engine that queues
 * runs itself (Slurm) gets every run at once.
 */
export class RunTable {
  readonly #active = new Map<string, TaskRun>();
  readonly #queue: TaskRun[] = [];
  readonly #maxRunning: number | null;
  readonly #pool: ResourcePool;
  readonly #admitsAll: boolean;
  readonly #host: RunHost;
  readonly #leases = new Map<TaskRun, Lease>();
  readonly #leaseFile: LeaseFile;
  #running = 0;

  /**
   * `definitionOf`: the definition of a registration as the catalog has it now, with the
   * resources a run of those inputs holds (undefined: no longer installed).
   */
  constructor(opts: {
    index: TaskIndex;
    executor: Executor;
    pool: ResourcePool;
    leaseFile: LeaseFile;
    workspace: string;
    closing: AbortSignal;
    maxRunning: number | null;
    definitionOf: (registration: string, inputs: Record<string, unknown>) => RunDefinition | undefined;
  }) {
    this.#admitsAll = opts.executor.queuesRuns;
    this.#leaseFile = opts.leaseFile;
    this.#maxRunning = this.#admitsAll ? null : opts.maxRunning;
    this.#pool = opts.pool;
    this.#host = {
      index: opts.index,
      executor: opts.executor,
      workspace: opts.workspace,
      closing: opts.closing,
      released: (run) => {
        if (this.#active.get(run.id) === run) this.#active.delete(run.id);
        const queued = this.#queue.indexOf(run);
        if (queued >= 0) this.#queue.splice(queued, 1);
        // A cancelled head of the queue may have been what held the others back.
        if (queued === 0) this.#pump();
      },
      slotFreed: (run) => {
        this.#running--;
        const lease = this.#leases.get(run);
        this.#leases.delete(run);
        if (lease) {
          this.#pool.release(lease);
          // A stopping service lets go of its runners, not of what they hold: a restart adopts both.
          if (holds(lease) && !this.#host.closing.aborted) this.#saveLeases();
        }
        this.#pump();
      },
      retryPolicy: (run) => opts.definitionOf(run.spec.registration, {})?.retries,
      retry: (run, failed, cause) => this.#retry(run, failed, cause, opts.definitionOf(run.spec.registration, failed.config)),
    };
  }

  /**
   * Owns a run whose directory holds its queued record (`status`, which the index shows from now
   * on); it starts when a slot and its resources are free.
   */
  submit(spec: RunSpec, status: TaskStatus): TaskRun {
    const run = this.#own(spec, { kind: 'queue', status });
    this.#queue.push(run);
    this.#pump();
    return run;
  }

  /**
   * Owns a run found without this service: taking over its live runner (with what it held before
   * a restart, `saved`), or settling it as lost.
   */
  take(spec: RunSpec, start: Exclude<RunStart, { kind: 'queue' }>, saved?: Lease): TaskRun {
    const run = this.#own(spec, start);
    if (start.kind === 'adopt') {
      this.#running++;
      if (saved && holds(saved)) this.#leases.set(run, this.#pool.claim(saved, run.holder));
    }
    return run;
  }

  /** The run of a Task while it is queued or running here. */
  get(id: string): TaskRun | undefined {
    return this.#active.get(id);
  }

  /** Runs owned here, optionally of one registration name (plugin removal asks this). */
  activeCount(registration?: string): number {
    let count = 0;
    for (const run of this.#active.values()) if (registration === undefined || run.spec.registration === registration) count++;
    return count;
  }

  /** Cancels a Task's run; true only when this call caused the `cancelled` record. */
  cancel(id: string): Promise<boolean> {
    return this.#active.get(id)?.cancel() ?? Promise.resolve(false);
  }

  /** The local runner process of each owned run that has one: the roots the machine history samples. */
  runnerProcesses(): RunnerProcess[] {
    const found: RunnerProcess[] = [];
    for (const run of this.#active.values()) {
      const pid = run.runnerPid;
      if (pid !== null) found.push({ taskId: run.id, runId: run.spec.runId, pid });
    }
    return found;
  }

  /** Which Task holds which GPU now. */
  gpuLeases(): GpuLease[] {
    return this.#pool.gpuLeases();
  }

  #saveLeases(): void {
    const saved = [...this.#leases].filter(([, lease]) => holds(lease)).map(([run, lease]) => ({ run_id: run.spec.runId, task_id: run.id, ...lease }));
    this.#leaseFile.save(saved);
  }

  /**
   * The next attempt of a failed run: same Task, new run_id, the Task's original created_at and
   * inputs. The failed attempt's records move aside first (the history), then the next one takes
   * the run's place in the table at once (a cancel reaches it) and joins the queue after its
   * backoff. Null when the definition is gone or the records could not be moved (the failure stands).
   */
  async #retry(run: TaskRun, failed: TaskStatus, cause: FailureCause, definition: RunDefinition | undefined): Promise<TaskRun | null> {
    if (!definition?.retries) return null;
    const { attempt } = run.spec;
    const delayS = retryDelay(definition.retries, attempt);
    const runId = newRunId();
    const status: TaskStatus = { ...failed, run_id: runId, state: 'queued', pid: null, started_at: null, finished_at: null, steps: [], result: {}, error: '', exit_code: 0 };
    try {
      await archiveAttempt(run.spec.dir, failed, { attempt, cause, next_run_id: runId, delay_s: delayS, retried_at: nowIso() }, status);
    } catch (err) {
      console.error(`taskyard: ${run.id} could not be retried: moving its attempt ${run.spec.runId} aside failed (${(err as Error).message}); the failure stands`);
      return null;
    }
    const spec: RunSpec = { ...run.spec, runId, attempt: attempt + 1, earlier: [...run.spec.earlier, run.spec.runId], module: definition.module, resources: definition.resources };
    const next = this.#own(spec, { kind: 'queue', status });
    this.#host.index.events.emit('task:retrying', { id: run.id, failed, next_run_id: runId, attempt, cause, delay_s: delayS });
    const queue = () => {
      if (next.phase !== 'queued') return; // cancelled while it waited
      this.#queue.push(next);
      this.#pump();
    };
    if (delayS > 0) setTimeout(queue, delayS * 1000).unref();
    else queue();
    return next;
  }

  #own(spec: RunSpec, start: RunStart): TaskRun {
    // Its first publication comes after an await at the earliest, so it is entered before it can leave.
    const run = new TaskRun(this.#host, spec, start);
    this.#active.set(spec.id, run);
    return run;
  }

  #pump(): void {
    while (this.#queue.length && (this.#maxRunning === null || this.#running < this.#maxRunning) && !this.#host.closing.aborted) {
      const head = this.#queue[0]!;
      // Cancelled while queued: it ends without a slot (and leaves the queue once published).
      if (head.phase !== 'queued') {
        this.#queue.shift();
        continue;
      }
      const lease = this.#pool.tryLease(this.#admitsAll ? {} : head.spec.resources, head.holder);
      if (!lease) return;
      this.#queue.shift();
      this.#running++;
      this.#leases.set(head, lease);
      if (holds(lease)) this.#saveLeases();
      // On Slurm the cluster sets the GPU variables of the job's own GPUs.
      head.admit(this.#admitsAll ? {} : this.#pool.environmentOf(lease));
    }
  }
}

/** Whether a lease holds anything worth keeping across a restart. */
function holds(lease: Lease): boolean {
  return lease.cpus > 0 || lease.gpus.length > 0;
}
