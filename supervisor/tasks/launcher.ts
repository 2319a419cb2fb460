import { join } from 'node:path';
import { TASK_FILES } from '../../workers/task-runner/record-files.js';
import { finalizeRun, type FinalizeTarget, type WorkerEnd } from './finalize.js';
import { setTimeout as delay } from 'node:timers/promises';
import { isAlive } from '../../workers/process-tree.js';
import { RUN_ID_VARIABLE, runnerOf } from './runner-processes.js';
import { stopWorker } from './stop-worker.js';
import type { TaskIndex } from './task-index.js';
import { SpawnerClient } from './spawner-client.js';
import { deferExtraCaCerts } from '../../workers/task-runner/extra-ca-certs.js';

/** How often an adopted worker (not our child, so no exit event) is checked in /proc. */
const ADOPTED_POLL_MS = 250;
/** Never handed to Task code: the service's own credentials. */
const PRIVATE_ENV = ['TASKYARD_TOKEN'];

/** One run to start: where its record is and which definition runs it. */
export interface RunRequest extends FinalizeTarget {
  registration: string;
  /** Absolute path of the plugin's task module, or '' for a built-in. */
  module: string;
}

interface ManagedRun {
  readonly req: RunRequest;
  phase: 'queued' | 'running';
  pid: number | null;
  /** Resolves with the pid once the worker started, or null when it never will. */
  started: Promise<number | null>;
  onStarted(pid: number | null): void;
  cancelRequested: boolean;
  /** Resolves once the worker is gone and the record is settled; true when we recorded `cancelled`. */
  settled: Promise<boolean>;
  exited: Promise<WorkerEnd>;
  /** Resolves `exited` (first call wins). */
  end(value: WorkerEnd): void;
}

/** What the launcher needs from the service. */
export interface LauncherOptions {
  workspace: string;
  index: TaskIndex;
  /** `service.max_running_tasks`: null = unlimited. */
  maxRunning: number | null;
  /** Configured `environment`, added to the service's own. */
  environment: Readonly<Record<string, string>>;
}

/**
 * Starts task runners through the spawner process (each detached: its own process group, stdout
 * and stderr on `task.log`),
 * queues submissions beyond `max_running_tasks` in order, watches every worker until it ends and
 * settles its record, and cancels with SIGTERM then SIGKILL.
 */
export class Launcher {
  readonly #opts: LauncherOptions;
  readonly #runs = new Map<string, ManagedRun>();
  readonly #queue: ManagedRun[] = [];
  readonly #spawner: SpawnerClient;
  #running = 0;
  #closed = false;

  constructor(opts: LauncherOptions) {
    this.#opts = opts;
    const env: NodeJS.ProcessEnv = { ...process.env, ...opts.environment };
    for (const name of PRIVATE_ENV) delete env[name];
    this.#spawner = new SpawnerClient(deferExtraCaCerts(env));
  }

  /** Whether a worker of this Task is managed here (queued, running or being settled). */
  isManaged(id: string): boolean {
    return this.#runs.has(id);
  }

  /** Active runs, optionally of one registration name (plugin removal asks this). */
  activeCount(registration?: string): number {
    return [...this.#runs.values()].filter((r) => registration === undefined || r.req.registration === registration).length;
  }

  /** Queues a run; it starts at once when a slot is free. Resolves when the record is settled. */
  submit(req: RunRequest): Promise<boolean> {
    const run = this.#track(req, 'queued', null);
    this.#queue.push(run);
    this.#startQueued();
    return run.settled;
  }

  /** Takes over a live worker left by a previous service process. */
  adopt(req: RunRequest, pid: number, startTime: string): Promise<boolean> {
    const run = this.#track(req, 'running', pid);
    this.#running++;
    this.#watchOrphan(run, pid, startTime);
    return run.settled;
  }

  /**
   * A worker whose exit nobody reports (adopted, or its spawner died) is checked in /proc, by pid
   * and process start time so that a later process reusing the pid is not mistaken for it.
   */
  #watchOrphan(run: ManagedRun, pid: number, startTime?: string): void {
    void (async () => {
      const since = startTime ?? (await runnerOf(pid, run.req.runId))?.startTime;
      while (since !== undefined && !this.#closed && (await isAlive(pid, since))) await delay(ADOPTED_POLL_MS);
      run.end({ kind: 'lost', pid });
    })();
  }

  /** Cancels a managed run; true only when this call caused the `cancelled` record. */
  async cancel(id: string): Promise<boolean> {
    const run = this.#runs.get(id);
    if (!run || run.cancelRequested) return false;
    run.cancelRequested = true;
    if (run.phase === 'queued') {
      this.#queue.splice(this.#queue.indexOf(run), 1);
      run.end({ kind: 'lost', pid: null });
    } else {
      // A spawn request may still be on its way to the spawner: wait for its pid.
      const pid = run.pid ?? (await run.started);
      if (pid !== null) await stopWorker(pid, run.exited);
    }
    return run.settled;
  }

  /** Stops watching; workers keep running and a later service adopts them. */
  close(): void {
    this.#closed = true;
    this.#spawner.close();
  }

  #track(req: RunRequest, phase: ManagedRun['phase'], pid: number | null): ManagedRun {
    let end!: (value: WorkerEnd) => void;
    let onStarted!: (pid: number | null) => void;
    const exited = new Promise<WorkerEnd>((resolve) => (end = resolve));
    const started = new Promise<number | null>((resolve) => (onStarted = resolve));
    if (pid !== null) onStarted(pid);
    void exited.then(() => onStarted(null));
    const run: ManagedRun = { req, phase, pid, started, onStarted, cancelRequested: false, exited, end, settled: Promise.resolve(false) };
    run.settled = this.#settle(run);
    this.#runs.set(req.id, run);
    return run;
  }

  async #settle(run: ManagedRun): Promise<boolean> {
    const end = await run.exited;
    // The service is stopping: the worker lives on, and so must its record.
    if (this.#closed && end.kind === 'lost') return false;
    const wasRunning = run.phase === 'running';
    try {
      const { written } = await finalizeRun(this.#opts.index, run.req, end, run.cancelRequested);
      return written && run.cancelRequested;
    } finally {
      this.#runs.delete(run.req.id);
      if (wasRunning) this.#running--;
      this.#startQueued();
    }
  }

  #startQueued(): void {
    const max = this.#opts.maxRunning;
    while (this.#queue.length && (max === null || this.#running < max) && !this.#closed) {
      const run = this.#queue.shift()!;
      this.#running++;
      run.phase = 'running';
      this.#spawn(run);
    }
  }

  #spawn(run: ManagedRun): void {
    const { req } = run;
    this.#spawner.spawn(
      {
        runId: req.runId,
        cwd: req.dir,
        logFile: join(req.dir, TASK_FILES.log),
        env: {
          TASKYARD_WORKSPACE: this.#opts.workspace,
          TASKYARD_TASK_DIR: req.dir,
          TASKYARD_TASK_ID: req.id,
          [RUN_ID_VARIABLE]: req.runId,
          TASKYARD_TASK_TYPE: req.parts.type,
          TASKYARD_TASK_REGISTRATION: req.registration,
          TASKYARD_TASK_MODULE: req.module,
        },
      },
      {
        spawned: (pid) => {
          run.pid = pid;
          run.onStarted(pid);
        },
        ended: (end) => run.end(end),
        orphaned: (pid) => this.#watchOrphan(run, pid),
      },
    );
  }
}
