import { join } from 'node:path';
import type { TaskResources, TaskRetries, TaskStatus } from '../../../schemas/tasks.js';
import { isTerminal, TASK_FILES } from '../../../core/task-record/record-files.js';
import { LiveTask } from '../follow/live-task.js';
import type { Executor, Runner, RunnerEnd } from '../engines/executor.js';
import { identityVariables } from '../engines/task-environment.js';
import { retryTerminalRecord, terminalStatusOf, writeTerminalRecord } from '../records/settle-record.js';
import type { TaskIndex } from '../records/task-index.js';
import type { TaskIdParts } from '../records/task-ids.js';
import { failureCause, shouldRetry, type FailureCause } from './retry-policy.js';
import { RunState, RunStateError, settlementOf, type RunPhase } from './run-state.js';

/** One run to own: where its record is and which definition runs it. */
export interface RunSpec {
  readonly id: string;
  readonly parts: TaskIdParts;
  readonly dir: string;
  readonly runId: string;
  readonly registration: string;
  /** Absolute path of the plugin's task module, or '' for a built-in. */
  readonly module: string;
  /** What the run asks for (definition and config); `{}` for runs found at a restart. */
  readonly resources: TaskResources;
  /** Which attempt of its submission this run is, from 1 (retries.ts). */
  readonly attempt: number;
  /** The run IDs of the submission's earlier attempts this service knows of: a wait on one follows this run. */
  readonly earlier: readonly string[];
}

/** What a run needs from its table. */
export interface RunHost {
  readonly index: TaskIndex;
  readonly executor: Executor;
  readonly workspace: string;
  /** Aborted when the service stops: runners live on, and their records are left as they are. */
  readonly closing: AbortSignal;
  /** The terminal state is published: the Task ID is free for delete and fixed-name submits. */
  released(run: TaskRun): void;
  /** The runner of an admitted run is gone: its slot is free. */
  slotFreed(run: TaskRun): void;
  /** The retry policy the run's definition has now (config included), if any. */
  retryPolicy(run: TaskRun): TaskRetries | undefined;
  /**
   * Tries a failed attempt again: moves its records aside, queues the next attempt (which takes
   * this run's place in the table) and answers it; null when it could not (the failure then stands).
   */
  retry(run: TaskRun, failed: TaskStatus, cause: FailureCause): Promise<TaskRun | null>;
}

export type { RunPhase } from './run-state.js';

/**
 * How a run begins: queued for a slot (with the queued record submit wrote), taking over a live
 * runner, or found without one.
 */
export type RunStart = { kind: 'queue'; status: TaskStatus } | { kind: 'adopt'; runner: Runner } | { kind: 'lost'; end: RunnerEnd | null };

/** Whether a re-read found nothing new (the safety timer re-reads running Tasks every second). */
function sameStatus(known: TaskStatus | null | undefined, read: TaskStatus): boolean {
  return known?.state === read.state && known.steps.length === read.steps.length && JSON.stringify(known) === JSON.stringify(read);
}

/**
 * The one owner of a run, in the spirit of execa: its whole lifecycle (admission, start, watch,
 * cancel, settlement) is one awaited function over one RunState (see run-state.ts), the record is
 * settled in exactly one place, and every status of the run the index shows is written here: the
 * queued record at submit, `running` at start, what the runner writes while it lives, and the
 * terminal state, published once: first the Task ID is released, then the index shows it, so
 * every Job that sees a terminal state can delete or replace the Task at once.
 */
export class TaskRun {
  readonly spec: RunSpec;
  /** The published terminal status; null when the directory came to hold another run. */
  readonly published: Promise<TaskStatus | null>;
  readonly #host: RunHost;
  readonly #state: RunState;
  /** Variables of what admission leased (the Task's own GPUs). */
  #leaseEnv: Record<string, string> = {};
  #live: LiveTask | undefined;
  /** The runner it had (started or adopted): what is left of it is ended before a retry. */
  #runner: Runner | undefined;
  /** The next attempt being made of this failed one: a cancel meanwhile cancels that. */
  #retrying: Promise<TaskRun | null> | undefined;

  /** The local process of its runner once it has one (null: not started yet, or run elsewhere, as on Slurm). */
  get runnerPid(): number | null {
    return this.#runner?.pid ?? null;
  }

  constructor(host: RunHost, spec: RunSpec, start: RunStart) {
    this.#host = host;
    this.spec = spec;
    if (start.kind === 'queue') {
      this.#state = new RunState(spec.runId, 'queued');
      if (!this.#state.show(start.status)) throw new RunStateError(`run ${spec.runId}: the record of a submit must be its queued status`);
      host.index.setStatus(spec.id, spec.parts, start.status, false);
    } else {
      const known = host.index.get(spec.id)?.status;
      this.#state = new RunState(spec.runId, 'found', known?.run_id === spec.runId ? known.state : undefined);
    }
    const state = this.#state;
    this.published = state.until(() => state.phase === 'published').then(() => state.terminal ?? null);
    void this.#own(start).catch((err: unknown) => {
      // Nothing in #own should throw; if it does, the run still ends and says so.
      console.error(`taskyard: the run ${spec.runId} of ${spec.id} failed in the service`, err);
      this.#fail();
    });
  }

  get id(): string {
    return this.spec.id;
  }

  get phase(): RunPhase {
    return this.#state.phase;
  }

  /** The shared watcher of the running Task (undefined while queued). */
  get live(): LiveTask | undefined {
    return this.#live;
  }

  /** Who holds what this run leases, as `machine_status` shows it. */
  get holder(): { taskId: string; runId: string } {
    return { taskId: this.spec.id, runId: this.spec.runId };
  }

  /** The table gives this queued run a slot, with the variables of what it leased. */
  admit(leaseEnv: Record<string, string>): void {
    this.#leaseEnv = leaseEnv;
    this.#state.to('starting');
  }

  /** Cancels the run; true only when this call caused the `cancelled` record. */
  async cancel(): Promise<boolean> {
    if (this.#retrying) return (await this.#retrying)?.cancel() ?? false;
    const state = this.#state;
    if (state.phase === 'published' || !state.end({ kind: 'cancel' })) return false;
    // A queued run ends here; a starting or running one once its runner is stopped (#watch).
    if (state.phase === 'queued') state.to('ended');
    await this.published;
    return state.cancelledHere;
  }

  async #own(start: RunStart): Promise<void> {
    const state = this.#state;
    const { closing } = this.#host;
    if (start.kind === 'queue') await state.until(() => state.phase !== 'queued');
    // Admitted (or adopted): the run holds a slot until its runner is gone.
    const counted = state.phase === 'starting' || start.kind === 'adopt';
    const runner = start.kind === 'adopt' ? start.runner : state.phase === 'starting' ? await this.#start() : undefined;
    if (runner) {
      this.#runner = runner;
      state.to('running');
      if (runner.startedAt) this.#showRunning(runner.pid, runner.startedAt);
      this.#live = new LiveTask(this.#host.index, this.spec, (status) => this.#observe(status));
      const end = await this.#watch(runner);
      await this.#live.refresh();
      // The service is stopping: the runner lives on, and so must its record.
      const leaving = closing.aborted && end.kind === 'lost';
      state.end(leaving ? { kind: 'closing' } : end);
      if (state.phase === 'running') state.to(leaving ? 'left' : 'ended');
    } else if (start.kind === 'lost') {
      state.end(start.end ?? { kind: 'not-started' });
      state.to(closing.aborted && start.end?.kind === 'lost' ? 'left' : 'ended');
    } else if (state.phase === 'starting') state.to('ended'); // the start failed: its reason is set
    this.#live?.close();
    if (counted) this.#host.slotFreed(this);
    if (state.phase === 'ended') await this.#settle();
  }

  /** Starts the runner; a failure to start is the run's end. */
  async #start(): Promise<Runner | undefined> {
    const { spec } = this;
    try {
      return await this.#host.executor.start({
        runId: spec.runId,
        cwd: spec.dir,
        logFile: join(spec.dir, TASK_FILES.log),
        resources: spec.resources,
        taskId: spec.id,
        env: { ...this.#leaseEnv, ...identityVariables({ workspace: this.#host.workspace, dir: spec.dir, taskId: spec.id, runId: spec.runId, taskType: spec.parts.type, registration: spec.registration, module: spec.module }) },
      });
    } catch (err) {
      this.#state.end({ kind: 'spawn-failed', message: (err as Error).message });
      return undefined;
    }
  }

  /**
   * The runner's end, raced against a reason to stop it (cancel, the time limit): a stopped runner
   * is awaited until nothing of it is left.
   */
  async #watch(runner: Runner): Promise<RunnerEnd> {
    const state = this.#state;
    const limit = this.#watchTimeLimit();
    try {
      const stop = state.until(() => state.reason !== undefined).then(() => null);
      const first = await Promise.race([runner.ended, stop]);
      if (first) return first;
      await this.#host.executor.stop(runner).catch((err: unknown) => console.error(`taskyard: stopping the runner of ${this.id} failed`, err));
      return await runner.ended;
    } finally {
      clearTimeout(limit);
    }
  }

  /** Locally the service enforces `time_limit_s`; an engine that queues runs (Slurm `--time`) does itself. */
  #watchTimeLimit(): NodeJS.Timeout | undefined {
    const seconds = this.spec.resources.time_limit_s;
    if (seconds === undefined || this.#host.executor.queuesRuns) return undefined;
    const timer = setTimeout(() => this.#state.end({ kind: 'time-limit', seconds }), seconds * 1000);
    timer.unref();
    return timer;
  }

  /**
   * The runner wrote its `running` record and said so as it started: the index shows that record
   * now (the same fields the runner wrote), instead of when the directory watch reads it.
   */
  #showRunning(pid: number | null, startedAt: string): void {
    const known = this.#host.index.get(this.id)?.status;
    if (known?.run_id !== this.spec.runId || known.state !== 'queued') return;
    this.#show({ ...known, state: 'running', pid, started_at: startedAt });
  }

  /**
   * A status of this run the live Task read from disk: a terminal one is published, unless it is
   * a failure the retry policy may try again: that is decided once the runner is gone (#settle),
   * so nobody sees a failure that a retry then replaces.
   */
  #observe(status: TaskStatus): void {
    if (isTerminal(status.state)) {
      if (!this.#mayRetry(status, false)) this.#publish(status);
    } else if (!sameStatus(this.#host.index.get(this.id)?.status, status)) this.#show(status);
  }

  /** Shows a non-terminal status, if the run may show it now (never a step back, never after its end). */
  #show(status: TaskStatus): void {
    if (this.#state.show(status)) this.#host.index.setStatus(this.id, this.spec.parts, status);
  }

  /** The one place where the service records how a run ended, when its runner did not. */
  async #settle(): Promise<void> {
    const { index } = this.#host;
    const files = { id: this.id, type: this.spec.parts.type, dir: this.spec.dir, runId: this.spec.runId };
    const known = index.get(this.id)?.status;
    const fallback = known?.run_id === this.spec.runId ? known : null;
    const { end, cancelled } = settlementOf(this.#state.reason);
    const decided = await terminalStatusOf(files, fallback, end, cancelled);
    if (!decided) return this.#publish(null);
    const cause = this.#mayRetry(decided.status, decided.write);
    if (cause && (await this.#retry(decided.status, cause))) return;
    if (decided.write && !(await writeTerminalRecord(files, decided.status))) {
      // A full disk: answer from memory now, and write the record once there is room.
      const stillOurs = () => index.get(this.id)?.status === decided.status;
      void retryTerminalRecord(files, decided.status, stillOurs, this.#host.closing);
    }
    this.#publish(decided.status, decided.write);
  }

  /** The cause a failed status would be retried for, or null (no policy, no attempts left, not that kind of failure). */
  #mayRetry(status: TaskStatus, decidedHere: boolean): FailureCause | null {
    if (status.state !== 'failed' || this.#host.closing.aborted) return null;
    const cause = failureCause(status, this.#state.reason, decidedHere);
    return shouldRetry(this.#host.retryPolicy(this), this.spec.attempt, cause, status.exit_code) ? cause : null;
  }

  /**
   * Hands the Task to its next attempt: this run ends here without showing its failure (the
   * attempt's records are kept under `runs/`); false when no next attempt could be made.
   */
  async #retry(failed: TaskStatus, cause: FailureCause): Promise<boolean> {
    this.#retrying = this.#nextAttempt(failed, cause);
    const next = await this.#retrying;
    if (!next) {
      this.#retrying = undefined;
      return false;
    }
    this.#state.publish(failed, false);
    return true;
  }

  /**
   * A runner that died leaves its command's processes running (they carry the run's mark): they
   * are ended first (by the runner, or by the mark where a restart found it dead), so two
   * attempts never run side by side in one directory.
   */
  async #nextAttempt(failed: TaskStatus, cause: FailureCause): Promise<TaskRun | null> {
    const { executor } = this.#host;
    const runner = this.#runner;
    const ending = runner ? executor.stop(runner) : executor.endLeftovers?.(this.spec.runId);
    await ending?.catch((err: unknown) => console.error(`taskyard: ending what is left of ${this.id}'s run ${this.spec.runId} failed`, err));
    return this.#host.retry(this, failed, cause);
  }

  /** Publishes the terminal state once: release the ID, then show it. */
  #publish(status: TaskStatus | null, writtenHere = false): void {
    if (!this.#state.publish(status, writtenHere)) return;
    // Its directory may be replaced from now on: the watch must not read the next run's files.
    this.#live?.close();
    this.#host.released(this);
    if (!status) return;
    const { index } = this.#host;
    index.setStatus(this.id, this.spec.parts, status);
    index.events.emit('task:ended', { id: this.id, status });
  }

  /** The owner failed: the run ends here, published without a record. */
  #fail(): void {
    const state = this.#state;
    if (state.phase === 'published' || state.phase === 'left') return;
    state.end({ kind: 'fault' });
    if (state.phase !== 'ended') state.to('ended');
    this.#publish(null);
  }
}
