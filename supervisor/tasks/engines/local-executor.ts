import { setTimeout as delay } from 'node:timers/promises';
import type { Socket } from 'node:net';
import { within } from '../../../workers/within.js';
import { killProcessTree } from '../../../workers/kill-tree.js';
import { collectTree } from '../../../workers/process-tree.js';
import type { PoolNotice, SpawnerEvent } from '../../../runner/spawner-messages.js';
import { PooledRunners } from './pooled-runners.js';
import type { Executor, LeftRun, StartSpec, Runner } from './executor.js';
import { LocalRunner } from './local-runner.js';
import { findRunners } from './runner-processes.js';
import { SpawnerLink, type DirectStart, type SpawnerListener } from './spawner-link.js';
import { runMark } from './task-environment.js';

/** Bound on waiting for SIGKILLed processes to disappear. */
const GONE_WITHIN_MS = 5000;

/**
 * Starts runners on this machine through the spawner process (see runner/spawner.ts and
 * spawner-link.ts), started on first use and again after it dies. With a pool, the spawner hands
 * over each ready runner's channel and a run is written straight to an idle runner (see
 * pooled-runners.ts); without one, or when a runner declines a run, one order asks the spawner to
 * start a runner for the run. Each runner is a LocalRunner that settles its own end: from its
 * spawner's exit report, or (its spawner dead, or adopted) from /proc, by pid and process start
 * time, so a later process reusing the pid is not mistaken for it.
 */
export class LocalExecutor implements Executor {
  readonly kind = 'local';
  readonly queuesRuns = false;
  readonly #env: NodeJS.ProcessEnv;
  readonly #spawnerArgs: string[];
  readonly #graceMs: number;
  readonly #pool: PooledRunners | undefined;
  /** Aborted at close: runners watched in /proc are let go (a restarted service adopts them). */
  readonly #closing = new AbortController();
  #spawner: SpawnerLink | undefined;
  readonly #listener: SpawnerListener = {
    ready: (runner, channel) => this.#ready(runner, channel),
    pool: (event) => this.#poolNews(event),
    exited: (link, runners, unanswered) => this.#spawnerExited(link, runners, unanswered),
  };

  /** `env` is the Tasks' base environment; `poolDir` holds the slot logs of runners started ahead. */
  /** `growthHoldMs`: how long the pool stays doubled after a run waited for a runner (default 10 s). */
  constructor(opts: { env: NodeJS.ProcessEnv; poolDir: string; poolSize: number; graceMs: number; growthHoldMs?: number }) {
    this.#env = opts.env;
    this.#spawnerArgs = opts.poolSize > 0 ? [opts.poolDir, String(opts.poolSize), String(opts.growthHoldMs ?? 10_000)] : [];
    this.#graceMs = opts.graceMs;
    this.#pool = opts.poolSize > 0 ? new PooledRunners((notice) => this.#notify(notice), (runner) => this.#spawner?.renew(runner)) : undefined;
  }

  /** Pooled runners ready for a run now. */
  get idleRunners(): number {
    return this.#pool?.idle ?? 0;
  }

  async start(spec: StartSpec): Promise<Runner> {
    if (this.#pool && !this.#closing.signal.aborted) {
      this.#link();
      const handover = await this.#pool.take(spec);
      if (handover.kind === 'failed') throw new Error(handover.message);
      if (handover.kind === 'accepted') {
        handover.runner.serves(spec.runId, handover.startedAt);
        return handover.runner;
      }
      // Declined (its log is on another file system): a runner started for this run.
    }
    const runner = LocalRunner.requested(spec.runId);
    this.#ask({ spec, runner }, true);
    return runner.started;
  }

  /** A live runner process names its run in its command line (see runner-processes.ts). */
  async adopt(runs: readonly LeftRun[]): Promise<Map<string, Runner>> {
    const adopted = new Map<string, Runner>();
    if (runs.length === 0) return adopted;
    const runners = await findRunners();
    for (const { runId } of runs) {
      const found = runners.get(runId);
      if (found) adopted.set(runId, LocalRunner.found(found.pid, runId, found.startTime, this.#closing.signal));
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
    // A pooled runner whose run already ended serves another run now: nothing of this one is left.
    if (runner instanceof LocalRunner && !runner.beginStop()) return;
    const runId = runner instanceof LocalRunner ? runner.runId : null;
    await killProcessTree(pid, this.#graceMs, runId === null ? undefined : runMark(runId));
    const deadline = Date.now() + GONE_WITHIN_MS;
    await within(runner.ended, GONE_WITHIN_MS);
    while (Date.now() < deadline && (await collectTree([pid])).length > 0) await delay(25);
  }

  /** The processes that still carry the run's mark (a command whose runner died), ended as `stop` ends a tree. */
  async endLeftovers(runId: string): Promise<void> {
    const mark = runMark(runId);
    const left = await collectTree([], { entry: mark });
    if (left.length > 0) await killProcessTree(left[0]!.pid, this.#graceMs, mark);
  }

  /** Closes the channel: the spawner exits, the runners keep running (a restarted service adopts them). */
  close(): void {
    this.#closing.abort();
    this.#pool?.close();
    this.#spawner?.disconnect();
    this.#spawner = undefined;
  }

  /** A pooled runner is ready. */
  #ready(runner: LocalRunner, channel: Socket): void {
    if (this.#pool) this.#pool.offer(runner, channel);
    else channel.destroy();
  }

  /** News of the pool. */
  #poolNews(event: Extract<SpawnerEvent, { type: 'idle-limit' | 'pool-failing' }>): void {
    if (event.type === 'pool-failing') this.#pool?.failWaiting(event.message);
    else this.#pool?.limitIdle(event.max);
  }

  /**
   * Runners started by a dead spawner are watched through /proc from now on; its
   * idle runners are let go. A start it may not have carried out is looked up by its run_id among
   * the processes, and asked again if absent. Runs waiting for a pooled runner get a new spawner.
   */
  #spawnerExited(link: SpawnerLink, runners: LocalRunner[], unanswered: DirectStart[]): void {
    if (this.#spawner === link) this.#spawner = undefined;
    const stopping = this.#closing.signal;
    for (const runner of runners) {
      // An idle runner goes; one being handed a run is watched once it accepts (see LocalRunner.serves).
      if (runner.runId === null && this.#pool?.drop(runner)) continue;
      runner.orphaned(stopping);
    }
    if (this.#pool?.waiting) this.#notify({ type: 'want', waiting: this.#pool.waiting });
    if (unanswered.length > 0) void this.#findOrAskAgain(unanswered).catch((err: unknown) => console.error('taskyard: recovering the runs of a dead spawner failed', err));
  }

  /** One look at /proc serves every start whose pid never came back. */
  async #findOrAskAgain(unanswered: DirectStart[]): Promise<void> {
    const runners = await findRunners();
    for (const start of unanswered) {
      const found = runners.get(start.spec.runId);
      if (found) start.runner.foundAlive(found.pid, found.startTime, this.#closing.signal);
      else this.#ask(start, false);
    }
  }

  /** Asks the spawner to start `start`'s runner; once more on a fresh spawner if the order never reached it. */
  #ask(start: DirectStart, retry: boolean): void {
    if (this.#closing.signal.aborted) return start.runner.failed('the service is stopping');
    this.#link().spawn(start, (err) => {
      if (retry) this.#ask(start, false);
      else start.runner.failed(`the spawner is unavailable: ${err.message}`);
    });
  }

  /** Tells the spawner how the pool is used (a fresh one is started when runs wait). */
  #notify(notice: PoolNotice): void {
    if (!this.#closing.signal.aborted) this.#link().notify(notice);
  }

  #link(): SpawnerLink {
    if (this.#spawner?.usable) return this.#spawner;
    this.#spawner = new SpawnerLink(this.#spawnerArgs, this.#env, this.#listener);
    return this.#spawner;
  }
}
