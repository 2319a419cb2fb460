import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { within } from '../../workers/within.js';
import { killProcessTree } from '../../workers/kill-tree.js';
import { collectTree, isAlive } from '../../workers/process-tree.js';
import type { SpawnerEvent, SpawnRequest } from '../../runner/spawner-messages.js';
import type { Executor, LeftRun, StartSpec, Runner, RunnerEnd } from './executor.js';
import { findRunners, runnerOf } from './runner-processes.js';

const SPAWNER = fileURLToPath(new URL('../../runner/spawner.js', import.meta.url));
/** How often a runner whose exit nobody reports (adopted, or its spawner died) is checked in /proc. */
const ORPHAN_POLL_MS = 250;
/** Bound on waiting for SIGKILLed processes to disappear. */
const GONE_WITHIN_MS = 5000;

/** What the spawner needs to start one run. */
type RunSpec = Omit<SpawnRequest, 'type'>;

interface Pending {
  req: RunSpec;
  spawner: ChildProcess;
  pid: number | null;
  started(pid: number, startedAt: string | null): void;
  failed(message: string): void;
  ended(end: RunnerEnd): void;
}

/**
 * Starts runners on this machine through the spawner process (see runner/spawner.ts):
 * started on first use and again after it dies, one IPC message per request, events routed back
 * by run_id. Runners whose spawner died, and adopted ones, are watched in /proc by pid and process
 * start time, so a later process reusing the pid is not mistaken for them.
 */
export class LocalExecutor implements Executor {
  readonly kind = 'local';
  readonly queuesRuns = false;
  readonly #env: NodeJS.ProcessEnv;
  readonly #spawnerArgs: string[];
  readonly #graceMs: number;
  readonly #runs = new Map<string, Pending>();
  #child: ChildProcess | undefined;
  #closed = false;

  /** `env` is the Tasks' base environment; `poolDir` holds the slot logs of runners started ahead. */
  constructor(opts: { env: NodeJS.ProcessEnv; poolDir: string; poolSize: number; graceMs: number }) {
    this.#env = opts.env;
    this.#spawnerArgs = opts.poolSize > 0 ? [opts.poolDir, String(opts.poolSize)] : [];
    this.#graceMs = opts.graceMs;
  }

  start(spec: StartSpec): Promise<Runner> {
    const req: RunSpec = { runId: spec.runId, cwd: spec.cwd, logFile: spec.logFile, env: spec.env };
    return new Promise((resolve, reject) => {
      let resolveEnd!: (end: RunnerEnd) => void;
      const ended = new Promise<RunnerEnd>((r) => (resolveEnd = r));
      let settled = false;
      const pending: Omit<Pending, 'spawner'> = {
        req,
        pid: null,
        started: (pid, startedAt) => {
          settled = true;
          resolve({ pid, ended, startedAt });
        },
        failed: (message) => {
          if (settled) return resolveEnd({ kind: 'spawn-failed', message });
          settled = true;
          reject(new Error(message));
        },
        ended: (end) => {
          if (!settled) return pending.failed(end.kind === 'spawn-failed' ? end.message : 'the task runner ended before it was reported started');
          resolveEnd(end);
        },
      };
      this.#send(pending, true);
    });
  }

  /** A live runner process names its run in its command line (see runner-processes.ts). */
  async adopt(runs: readonly LeftRun[]): Promise<Map<string, Runner>> {
    const adopted = new Map<string, Runner>();
    if (runs.length === 0) return adopted;
    const runners = await findRunners();
    for (const { runId } of runs) {
      const runner = runners.get(runId);
      if (runner) adopted.set(runId, { pid: runner.pid, ended: this.#watchOrphan(runner.pid, runId, runner.startTime) });
    }
    return adopted;
  }

  async stop(runner: Runner): Promise<void> {
    const { pid } = runner;
    if (pid === null) return;
    await killProcessTree(pid, this.#graceMs);
    const deadline = Date.now() + GONE_WITHIN_MS;
    await within(runner.ended, GONE_WITHIN_MS);
    while (Date.now() < deadline && (await collectTree([pid])).length > 0) await delay(25);
  }

  /** Closes the channel: the spawner exits, the runners keep running (a restarted service adopts them). */
  close(): void {
    this.#closed = true;
    this.#child?.disconnect();
    this.#child = undefined;
  }

  #send(run: Omit<Pending, 'spawner'>, retry: boolean): void {
    if (this.#closed) return run.failed('the service is stopping');
    const spawner = this.#ensure();
    const pending: Pending = { ...run, spawner };
    this.#runs.set(run.req.runId, pending);
    spawner.send({ type: 'spawn', ...run.req } satisfies SpawnRequest, (err) => {
      if (!err) return;
      // The spawner died before it read the request (its exit may not be processed yet): the
      // request certainly started nothing, so a fresh spawner may take it once.
      this.#runs.delete(run.req.runId);
      if (this.#child === spawner) this.#child = undefined;
      if (retry) this.#send(run, false);
      else run.failed(`the spawner is unavailable: ${err.message}`);
    });
  }

  #ensure(): ChildProcess {
    if (this.#child?.connected) return this.#child;
    // No execArgv: the service's own flags (a debugger, a test runner's loader hooks) are not the spawner's.
    const child = fork(SPAWNER, this.#spawnerArgs, { execArgv: [], env: this.#env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
    child.on('message', (event: SpawnerEvent) => this.#onEvent(event));
    child.once('exit', () => void this.#onSpawnerExit(child).catch((err: unknown) => console.error('taskyard: recovering the runs of a dead spawner failed', err)));
    child.on('error', () => undefined); // its exit says the same
    // The service's own handles keep it alive; the spawner must not keep a stopping one up.
    child.unref();
    child.channel?.unref();
    this.#child = child;
    return child;
  }

  #onEvent(event: SpawnerEvent): void {
    const run = this.#runs.get(event.runId);
    if (!run) return;
    if (event.type === 'spawned') {
      run.pid = event.pid;
      run.started(event.pid, event.startedAt);
      return;
    }
    this.#runs.delete(event.runId);
    if (event.type === 'spawn-failed') run.failed(event.message);
    else run.ended({ kind: 'exited', code: event.code, signal: event.signal });
  }

  /**
   * Runs started by a dead spawner are watched through /proc from now on. A request it may not
   * have carried out is looked up by its run_id among the processes, and sent again if absent.
   */
  async #onSpawnerExit(child: ChildProcess): Promise<void> {
    if (this.#child === child) this.#child = undefined;
    const orphans = [...this.#runs.values()].filter((run) => run.spawner === child);
    for (const run of orphans) this.#runs.delete(run.req.runId);
    if (orphans.length === 0) return;
    // One look at /proc serves every request whose pid never came back.
    const runners = orphans.some((r) => r.pid === null) ? await findRunners() : new Map();
    for (const run of orphans) {
      const found = runners.get(run.req.runId);
      const pid = run.pid ?? found?.pid ?? null;
      if (pid === null) {
        this.#send(run, false);
        continue;
      }
      if (run.pid === null) run.started(pid, null);
      this.#watchOrphan(pid, run.req.runId, found?.startTime).then(run.ended, (err: unknown) => {
        console.error(`taskyard: watching the runner ${pid} failed`, err);
        run.ended({ kind: 'lost', pid });
      });
    }
  }

  async #watchOrphan(pid: number, runId: string, startTime?: string): Promise<RunnerEnd> {
    const since = startTime ?? (await runnerOf(pid, runId))?.startTime;
    while (since !== undefined && !this.#closed && (await isAlive(pid, since))) await delay(ORPHAN_POLL_MS);
    return { kind: 'lost', pid };
  }
}
