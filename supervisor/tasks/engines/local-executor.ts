import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { within } from '../../../workers/within.js';
import { killProcessTree } from '../../../workers/kill-tree.js';
import { cannotTellNow, collectTree, isAlive } from '../../../workers/process-tree.js';
import type { Socket } from 'node:net';
import type { PoolNotice, RunSpec, SpawnerEvent, SpawnRequest } from '../../../runner/spawner-messages.js';
import { PooledRunners } from './pooled-runners.js';
import type { Executor, LeftRun, StartSpec, Runner, RunnerEnd } from './executor.js';
import { findRunners, runnerOf } from './runner-processes.js';
import { runMark } from './task-environment.js';

const SPAWNER = fileURLToPath(new URL('../../../runner/spawner.js', import.meta.url));
/** How often a runner whose exit nobody reports (adopted, or its spawner died) is checked in /proc. */
const ORPHAN_POLL_MS = 250;
/** Bound on waiting for SIGKILLed processes to disappear. */
const GONE_WITHIN_MS = 5000;

/** A request to start a runner for one run, sent to a spawner and not answered yet. */
interface Request {
  req: RunSpec;
  spawner: ChildProcess;
  started(pid: number, ended: Promise<RunnerEnd>): void;
  failed(message: string): void;
}

/** A runner process a spawner started: its end comes from that spawner's exit report. */
interface Tracked {
  spawner: ChildProcess;
  /** The run it serves, once known (a pooled runner: once it accepted one). */
  runId: string | null;
  /** Its spawner died: its end is watched in /proc once its run is known. */
  orphaned: boolean;
  end(end: RunnerEnd): void;
}

/**
 * Starts runners on this machine through the spawner process (see runner/spawner.ts), started
 * on first use and again after it dies. With a pool, the spawner hands over each ready runner's
 * channel and a run is written straight to an idle runner (see pooled-runners.ts); without one,
 * or when a runner declines a run, one IPC request starts a runner for the run. Exits are
 * reported by pid. Runners whose spawner died, and adopted ones, are watched in /proc by pid and
 * process start time, so a later process reusing the pid is not mistaken for them.
 */
export class LocalExecutor implements Executor {
  readonly kind = 'local';
  readonly queuesRuns = false;
  readonly #env: NodeJS.ProcessEnv;
  readonly #spawnerArgs: string[];
  readonly #graceMs: number;
  readonly #requests = new Map<string, Request>();
  readonly #tracked = new Map<number, Tracked>();
  readonly #pool: PooledRunners | undefined;
  /** The run each started or adopted runner serves: its processes carry `TASKYARD_RUN_ID=<run_id>`. */
  readonly #runIds = new WeakMap<Runner, string>();
  #child: ChildProcess | undefined;
  #closed = false;

  /** `env` is the Tasks' base environment; `poolDir` holds the slot logs of runners started ahead. */
  /** `growthHoldMs`: how long the pool stays doubled after a run waited for a runner (default 10 s). */
  constructor(opts: { env: NodeJS.ProcessEnv; poolDir: string; poolSize: number; graceMs: number; growthHoldMs?: number }) {
    this.#env = opts.env;
    this.#spawnerArgs = opts.poolSize > 0 ? [opts.poolDir, String(opts.poolSize), String(opts.growthHoldMs ?? 10_000)] : [];
    this.#graceMs = opts.graceMs;
    this.#pool = opts.poolSize > 0 ? new PooledRunners((notice) => this.#notify(notice)) : undefined;
  }

  /** Pooled runners ready for a run now. */
  get idleRunners(): number {
    return this.#pool?.idle ?? 0;
  }

  async start(spec: StartSpec): Promise<Runner> {
    const req: RunSpec = { runId: spec.runId, cwd: spec.cwd, logFile: spec.logFile, env: spec.env };
    if (this.#pool && !this.#closed) {
      this.#ensure();
      const handover = await this.#pool.take(req);
      if (handover.kind === 'failed') throw new Error(handover.message);
      if (handover.kind === 'accepted') {
        const { pid, ended } = handover.runner;
        this.#serves(pid, req.runId);
        return this.#serving(req.runId, { pid, ended, startedAt: handover.startedAt });
      }
      // Declined (its log is on another file system): a runner started for this run.
    }
    return new Promise((resolve, reject) => {
      this.#send({ req, started: (pid, ended) => resolve(this.#serving(req.runId, { pid, ended, startedAt: null })), failed: (message) => reject(new Error(message)) }, true);
    });
  }

  /** A live runner process names its run in its command line (see runner-processes.ts). */
  async adopt(runs: readonly LeftRun[]): Promise<Map<string, Runner>> {
    const adopted = new Map<string, Runner>();
    if (runs.length === 0) return adopted;
    const runners = await findRunners();
    for (const { runId } of runs) {
      const runner = runners.get(runId);
      if (runner) adopted.set(runId, this.#serving(runId, { pid: runner.pid, ended: this.#watchOrphan(runner.pid, runId, runner.startTime) }));
    }
    return adopted;
  }

  /**
   * Kills the runner's process group, its descendants, and every process carrying its run's
   * `TASKYARD_RUN_ID` (one that left the group and lost its parent: a daemon, `(setsid cmd &)`).
   */
  async stop(runner: Runner): Promise<void> {
    const { pid } = runner;
    if (pid === null) return;
    const runId = this.#runIds.get(runner);
    await killProcessTree(pid, this.#graceMs, runId === undefined ? undefined : runMark(runId));
    const deadline = Date.now() + GONE_WITHIN_MS;
    await within(runner.ended, GONE_WITHIN_MS);
    while (Date.now() < deadline && (await collectTree([pid])).length > 0) await delay(25);
  }

  /** Closes the channel: the spawner exits, the runners keep running (a restarted service adopts them). */
  close(): void {
    this.#closed = true;
    this.#pool?.close();
    this.#child?.disconnect();
    this.#child = undefined;
  }

  #send(request: Omit<Request, 'spawner'>, retry: boolean): void {
    if (this.#closed) return request.failed('the service is stopping');
    const spawner = this.#ensure();
    const { runId } = request.req;
    this.#requests.set(runId, { ...request, spawner });
    spawner.send({ type: 'spawn', ...request.req } satisfies SpawnRequest, (err) => {
      if (!err) return;
      // The spawner died before it read the request (its exit may not be processed yet): the
      // request certainly started nothing, so a fresh spawner may take it once.
      this.#requests.delete(runId);
      if (this.#child === spawner) this.#child = undefined;
      if (retry) this.#send(request, false);
      else request.failed(`the spawner is unavailable: ${err.message}`);
    });
  }

  /** Tells the spawner how the pool is used (a fresh one is started when runs wait). */
  #notify(notice: PoolNotice): void {
    if (!this.#closed) this.#ensure().send(notice, () => undefined);
  }

  #ensure(): ChildProcess {
    if (this.#child?.connected) return this.#child;
    // Not the service's flags (a debugger, a test runner's loader hooks); --no-warnings: the
    // spawner reports a runner the service could not receive once, not once per runner.
    const child = fork(SPAWNER, this.#spawnerArgs, { execArgv: ['--no-warnings'], env: this.#env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
    child.on('message', (event: SpawnerEvent, channel?: Socket) => this.#onEvent(child, event, channel));
    child.once('exit', () => void this.#onSpawnerExit(child).catch((err: unknown) => console.error('taskyard: recovering the runs of a dead spawner failed', err)));
    child.on('error', () => undefined); // its exit says the same
    // The service's own handles keep it alive; the spawner must not keep a stopping one up.
    child.unref();
    child.channel?.unref();
    this.#child = child;
    return child;
  }

  /** Remembers the run `runner` serves, for `stop`. */
  #serving(runId: string, runner: Runner): Runner {
    this.#runIds.set(runner, runId);
    return runner;
  }

  /** The end of a runner `spawner` started, as the spawner will report it. */
  #track(pid: number, spawner: ChildProcess, runId: string | null): Promise<RunnerEnd> {
    return new Promise((end) => this.#tracked.set(pid, { spawner, runId, orphaned: false, end }));
  }

  /** A pooled runner accepted `runId`; if its spawner died meanwhile, its end is watched in /proc from now on. */
  #serves(pid: number, runId: string): void {
    const tracked = this.#tracked.get(pid);
    if (!tracked) return; // its exit was reported already
    tracked.runId = runId;
    if (tracked.orphaned) this.#watchTracked(pid, { ...tracked, runId });
  }

  #onEvent(spawner: ChildProcess, event: SpawnerEvent, channel?: Socket): void {
    if (event.type === 'ready') {
      if (!channel) return;
      const ended = this.#track(event.pid, spawner, null);
      if (this.#pool) this.#pool.offer({ pid: event.pid, channel, ended });
      else channel.destroy();
      return;
    }
    if (event.type === 'pool-failing') return this.#pool?.failWaiting(event.message);
    if (event.type === 'idle-limit') return this.#pool?.limitIdle(event.max);
    if (event.type === 'exited') {
      const tracked = this.#tracked.get(event.pid);
      this.#tracked.delete(event.pid);
      return tracked?.end({ kind: 'exited', code: event.code, signal: event.signal });
    }
    const request = this.#requests.get(event.runId);
    if (!request) return;
    this.#requests.delete(event.runId);
    if (event.type === 'spawned') request.started(event.pid, this.#track(event.pid, spawner, event.runId));
    else request.failed(event.message);
  }

  /**
   * Runs started by a dead spawner are watched through /proc from now on; its idle runners are
   * let go. A request it may not have carried out is looked up by its run_id among the
   * processes, and sent again if absent. Runs waiting for a pooled runner get a new spawner.
   */
  async #onSpawnerExit(child: ChildProcess): Promise<void> {
    if (this.#child === child) this.#child = undefined;
    for (const [pid, tracked] of this.#tracked) {
      if (tracked.spawner !== child) continue;
      tracked.orphaned = true;
      if (tracked.runId !== null) this.#watchTracked(pid, { ...tracked, runId: tracked.runId });
      else if (this.#pool?.drop(pid)) this.#tracked.delete(pid);
      // Otherwise it is being handed a run: watched once it accepts (see #serves).
    }
    if (this.#pool?.waiting) this.#notify({ type: 'want', waiting: this.#pool.waiting });
    const orphans = [...this.#requests.values()].filter((request) => request.spawner === child);
    for (const request of orphans) this.#requests.delete(request.req.runId);
    if (orphans.length === 0) return;
    // One look at /proc serves every request whose pid never came back.
    const runners = await findRunners();
    for (const request of orphans) {
      const found = runners.get(request.req.runId);
      if (!found) {
        this.#send(request, false);
        continue;
      }
      request.started(found.pid, this.#watchOrphan(found.pid, request.req.runId, found.startTime).catch(() => ({ kind: 'lost', pid: found.pid })));
    }
  }

  /** Watches a runner of a dead spawner, serving `tracked.runId`, in /proc until it is gone. */
  #watchTracked(pid: number, tracked: Tracked & { runId: string }): void {
    this.#tracked.delete(pid);
    this.#watchOrphan(pid, tracked.runId).then(tracked.end, (err: unknown) => {
      console.error(`taskyard: watching the runner ${pid} failed`, err);
      tracked.end({ kind: 'lost', pid });
    });
  }

  async #watchOrphan(pid: number, runId: string, startTime?: string): Promise<RunnerEnd> {
    const since = startTime ?? (await this.#startTimeOf(pid, runId));
    while (since !== undefined && !this.#closed && (await isAlive(pid, since))) await delay(ORPHAN_POLL_MS);
    return { kind: 'lost', pid };
  }

  /**
   * The start time of `pid` while it is the runner of `runId`, else undefined. While /proc cannot
   * be read (the service out of descriptors: the very moment a spawner may die), it asks again
   * rather than take the runner for gone and settle a run that goes on.
   */
  async #startTimeOf(pid: number, runId: string): Promise<string | undefined> {
    for (;;) {
      try {
        return (await runnerOf(pid, runId))?.startTime;
      } catch (err) {
        if (this.#closed || !cannotTellNow(err)) return undefined;
        await delay(ORPHAN_POLL_MS);
      }
    }
  }
}
