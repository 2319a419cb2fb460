import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TASK_FILES } from '../../workers/task-runner/record-files.js';
import { finalizeRun, type FinalizeTarget, type WorkerEnd } from './finalize.js';
import { killProcessGroup } from './kill-group.js';
import { isAlive, readProcStat } from './proc-info.js';
import type { TaskIndex } from './task-index.js';
import { removeWorkerFile, writeWorkerFile } from './worker-files.js';

const RUNNER = fileURLToPath(new URL('../../workers/task-runner/main.js', import.meta.url));
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
  cancelRequested: boolean;
  /** Resolves once the worker is gone and the record is settled; true when we recorded `cancelled`. */
  settled: Promise<boolean>;
  exited: Promise<WorkerEnd>;
  /** Resolves `exited` (first call wins). */
  end(value: WorkerEnd): void;
}

export interface LauncherOptions {
  workspace: string;
  index: TaskIndex;
  /** `service.max_running_tasks`: null = unlimited. */
  maxRunning: number | null;
  /** Configured `environment`, added to the service's own. */
  environment: Readonly<Record<string, string>>;
}

/**
 * Starts task runners (each detached: its own process group, stdout and stderr on `task.log`),
 * queues submissions beyond `max_running_tasks` in order, watches every worker until it ends and
 * settles its record, and cancels with SIGTERM then SIGKILL.
 */
export class Launcher {
  readonly #opts: LauncherOptions;
  readonly #runs = new Map<string, ManagedRun>();
  readonly #queue: ManagedRun[] = [];
  #running = 0;
  #closed = false;

  constructor(opts: LauncherOptions) {
    this.#opts = opts;
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
  adopt(req: RunRequest, pid: number, startTicks: number): Promise<boolean> {
    const run = this.#track(req, 'running', pid);
    this.#running++;
    // Not our child: no exit event, so its /proc entry is checked on a timer.
    const timer = setInterval(() => {
      if (isAlive(pid, startTicks) && !this.#closed) return;
      clearInterval(timer);
      run.end({ kind: 'lost', pid });
    }, ADOPTED_POLL_MS);
    return run.settled;
  }

  /** Cancels a managed run; true only when this call caused the `cancelled` record. */
  async cancel(id: string): Promise<boolean> {
    const run = this.#runs.get(id);
    if (!run || run.cancelRequested) return false;
    run.cancelRequested = true;
    if (run.phase === 'queued') {
      this.#queue.splice(this.#queue.indexOf(run), 1);
      run.end({ kind: 'lost', pid: null });
    } else if (run.pid !== null) {
      await killProcessGroup(run.pid, run.exited);
    }
    return run.settled;
  }

  /** Stops watching; workers keep running and a later service adopts them. */
  close(): void {
    this.#closed = true;
  }

  #track(req: RunRequest, phase: ManagedRun['phase'], pid: number | null): ManagedRun {
    let end!: (value: WorkerEnd) => void;
    const exited = new Promise<WorkerEnd>((resolve) => (end = resolve));
    const run: ManagedRun = { req, phase, pid, cancelRequested: false, exited, end, settled: Promise.resolve(false) };
    run.settled = this.#settle(run);
    this.#runs.set(req.id, run);
    return run;
  }

  async #settle(run: ManagedRun): Promise<boolean> {
    const end = await run.exited;
    const wasRunning = run.phase === 'running';
    try {
      if (this.#closed && end.kind === 'lost') return false;
      const { written } = await finalizeRun(this.#opts.index, run.req, end, run.cancelRequested);
      return written && run.cancelRequested;
    } finally {
      await removeWorkerFile(this.#opts.workspace, run.req.runId).catch(() => undefined);
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
    const resolve = run.end;
    const env: NodeJS.ProcessEnv = { ...process.env, ...this.#opts.environment };
    for (const name of PRIVATE_ENV) delete env[name];
    Object.assign(env, {
      TASKYARD_WORKSPACE: this.#opts.workspace,
      TASKYARD_TASK_DIR: req.dir,
      TASKYARD_TASK_ID: req.id,
      TASKYARD_RUN_ID: req.runId,
      TASKYARD_TASK_TYPE: req.parts.type,
      TASKYARD_TASK_REGISTRATION: req.registration,
      TASKYARD_TASK_MODULE: req.module,
    });
    let logFd: number | undefined;
    try {
      logFd = openSync(join(req.dir, TASK_FILES.log), 'a');
      const child = spawn(process.execPath, [RUNNER], { cwd: req.dir, detached: true, stdio: ['ignore', logFd, logFd], env });
      child.once('error', (err) => resolve({ kind: 'spawn-failed', message: err.message }));
      child.once('exit', (code, signal) => resolve({ kind: 'exited', code, signal }));
      child.unref();
      if (child.pid === undefined) return;
      run.pid = child.pid;
      const startTicks = readProcStat(child.pid)?.startTicks ?? 0;
      void writeWorkerFile(this.#opts.workspace, { task_id: req.id, run_id: req.runId, pid: child.pid, start_ticks: startTicks }).catch(() => undefined);
    } catch (err) {
      resolve({ kind: 'spawn-failed', message: (err as Error).message });
    } finally {
      if (logFd !== undefined) closeSync(logFd);
    }
  }
}
