import { join } from 'node:path';
import type { TaskResources, TaskStatus } from '../../../schemas/tasks.js';
import { TASK_FILES } from '../../../core/task-record/record-files.js';
import { LiveTask } from '../follow/live-task.js';
import type { Executor, Runner, RunnerEnd } from '../engines/executor.js';
import { identityVariables } from '../engines/task-environment.js';
import { retryTerminalRecord, terminalStatusOf, writeTerminalRecord } from '../records/settle-record.js';
import type { TaskIndex } from '../records/task-index.js';
import type { TaskIdParts } from '../records/task-ids.js';

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
}

export type RunPhase = 'queued' | 'starting' | 'running' | 'ended';

/** How a run begins: queued for a slot, taking over a live runner, or found without one. */
export type RunStart = { kind: 'queue' } | { kind: 'adopt'; runner: Runner } | { kind: 'lost'; end: RunnerEnd | null };

/**
 * The one owner of a run, in the spirit of execa: its whole lifecycle (admission, start, watch,
 * cancel, settlement) is one awaited function, the record is settled in exactly one place, and
 * the terminal state is published once: first the Task ID is released, then the index shows it,
 * so every Job that sees a terminal state can delete or replace the Task at once.
 */
export class TaskRun {
  readonly spec: RunSpec;
  /** The published terminal status; null when the directory came to hold another run. */
  readonly published: Promise<TaskStatus | null>;
  readonly #host: RunHost;
  #phase: RunPhase = 'queued';
  #admit: (go: boolean) => void = () => undefined;
  /** Variables of what admission leased (the Task's own GPUs). */
  #leaseEnv: Record<string, string> = {};
  #timeLimit: NodeJS.Timeout | undefined;
  #timedOut = false;
  #runner: Runner | undefined;
  #live: LiveTask | undefined;
  #terminal: TaskStatus | null | undefined;
  #resolvePublished!: (status: TaskStatus | null) => void;
  #cancelRequested = false;
  #cancelledHere = false;
  #stopping: Promise<void> | undefined;

  constructor(host: RunHost, spec: RunSpec, start: RunStart) {
    this.#host = host;
    this.spec = spec;
    this.published = new Promise((resolve) => (this.#resolvePublished = resolve));
    const admitted = start.kind === 'queue' ? new Promise<boolean>((resolve) => (this.#admit = resolve)) : Promise.resolve(true);
    void this.#own(start, admitted).catch((err: unknown) => {
      // Nothing in #own should throw; if it does, the run still ends and says so.
      console.error(`taskyard: the run ${spec.runId} of ${spec.id} failed in the service`, err);
      this.#publish(null);
    });
  }

  get id(): string {
    return this.spec.id;
  }

  get phase(): RunPhase {
    return this.#phase;
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
    this.#admit(true);
  }

  /** Cancels the run; true only when this call caused the `cancelled` record. */
  async cancel(): Promise<boolean> {
    if (this.#terminal !== undefined || this.#cancelRequested) return false;
    this.#cancelRequested = true;
    if (this.#phase === 'queued') this.#admit(false);
    else this.#stopWorker();
    await this.published;
    return this.#cancelledHere;
  }

  async #own(start: RunStart, admitted: Promise<boolean>): Promise<void> {
    let end: RunnerEnd | null = start.kind === 'lost' ? start.end : null;
    let counted = false;
    if (start.kind !== 'lost') {
      counted = await admitted;
      const runner = start.kind === 'adopt' ? start.runner : counted ? await this.#start() : undefined;
      if (runner && 'ended' in runner) {
        this.#runner = runner;
        this.#phase = 'running';
        if (runner.startedAt) this.#showRunning(runner.pid, runner.startedAt);
        this.#live = new LiveTask(this.#host.index, this.spec, (status) => this.#publish(status));
        if (this.#cancelRequested) this.#stopWorker();
        this.#watchTimeLimit();
        end = await runner.ended;
        clearTimeout(this.#timeLimit);
        await this.#stopping;
        if (this.#timedOut && !this.#cancelRequested) end = { kind: 'time-limit', seconds: this.spec.resources.time_limit_s! };
        await this.#live.refresh();
      } else if (runner) end = runner;
    }
    this.#phase = 'ended';
    this.#live?.close();
    if (counted) this.#host.slotFreed(this);
    // The service is stopping: the runner lives on, and so must its record.
    if (this.#terminal !== undefined || (this.#host.closing.aborted && end?.kind === 'lost')) return;
    await this.#settle(end);
  }

  /** Starts the runner; a failure to start is the run's end. */
  async #start(): Promise<Runner | RunnerEnd> {
    this.#phase = 'starting';
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
      return { kind: 'spawn-failed', message: (err as Error).message };
    }
  }

  /**
   * The runner wrote its `running` record and said so as it started: the index shows that record
   * now (the same fields the runner wrote), instead of when the directory watch reads it.
   */
  #showRunning(pid: number | null, startedAt: string): void {
    const { index } = this.#host;
    const known = index.get(this.id)?.status;
    if (known?.run_id !== this.spec.runId || known.state !== 'queued') return;
    index.setStatus(this.id, this.spec.parts, { ...known, state: 'running', pid, started_at: startedAt });
  }

  /** Locally the service enforces `time_limit_s`; an engine that queues runs (Slurm `--time`) does itself. */
  #watchTimeLimit(): void {
    const limit = this.spec.resources.time_limit_s;
    if (limit === undefined || this.#host.executor.queuesRuns) return;
    this.#timeLimit = setTimeout(() => {
      this.#timedOut = true;
      this.#stopWorker();
    }, limit * 1000);
    this.#timeLimit.unref();
  }

  #stopWorker(): void {
    const runner = this.#runner;
    if (!runner || this.#stopping) return;
    this.#stopping = this.#host.executor.stop(runner).catch((err: unknown) => console.error(`taskyard: stopping the runner of ${this.id} failed`, err));
  }

  /** The one place where the service records how a run ended, when its runner did not. */
  async #settle(end: RunnerEnd | null): Promise<void> {
    const { index } = this.#host;
    const files = { id: this.id, type: this.spec.parts.type, dir: this.spec.dir, runId: this.spec.runId };
    const known = index.get(this.id)?.status;
    const fallback = known?.run_id === this.spec.runId ? known : null;
    const decided = await terminalStatusOf(files, fallback, end, this.#cancelRequested);
    if (!decided) return this.#publish(null);
    if (decided.write && !(await writeTerminalRecord(files, decided.status))) {
      // A full disk: answer from memory now, and write the record once there is room.
      const stillOurs = () => index.get(this.id)?.status === decided.status;
      void retryTerminalRecord(files, decided.status, stillOurs, this.#host.closing);
    }
    this.#cancelledHere = decided.write && decided.status.state === 'cancelled';
    this.#publish(decided.status);
  }

  /** Publishes the terminal state once: release the ID, then show it. */
  #publish(status: TaskStatus | null): void {
    if (this.#terminal !== undefined) return;
    this.#terminal = status;
    // Its directory may be replaced from now on: the watch must not read the next run's files.
    this.#live?.close();
    this.#host.released(this);
    if (status) this.#host.index.setStatus(this.id, this.spec.parts, status);
    this.#resolvePublished(status);
  }
}
