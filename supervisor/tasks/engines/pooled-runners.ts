import { lstatSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { PoolNotice, RunAssignment, StartSpec } from '../../../runner/spawner-messages.js';
import type { LocalRunner } from './local-runner.js';
import { RunnerChannel, type ChannelEvent } from './runner-channel.js';

/** How a pooled runner answered a run. */
export type Handover =
  /** It wrote its `running` record (started_at) and runs the run. */
  | { kind: 'accepted'; runner: LocalRunner; startedAt: string | null }
  /** It could not take the run (its log is on another file system): start a runner for it directly. */
  | { kind: 'declined'; message: string }
  | { kind: 'failed'; message: string };

/** A ready runner's first answer on its channel, or `closed` when the channel closed before any. */
type Answer = Exclude<ChannelEvent, { type: 'ready' }>;

/**
 * A ready runner the spawner handed over (or one back from a command run), with its channel, and
 * its answer as one awaited value, made when it is offered: an idle runner whose channel closes is
 * forgotten by the same value.
 */
interface Slot {
  readonly runner: LocalRunner;
  readonly channel: RunnerChannel;
  readonly answer: Promise<Answer>;
}

/** The same runner process as a fresh LocalRunner for its next run, or undefined when it may not serve one. */
export type Renew = (runner: LocalRunner) => LocalRunner | undefined;

/** Whether a runner moved its slot log onto `logFile`, the first step of taking a run. */
function tookRun(logFile: string): boolean {
  try {
    return lstatSync(logFile, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false; // its directory is gone or replaced: no runner could have moved a log there
  }
}

/** A run waiting for a pooled runner. */
interface Waiter {
  readonly spec: StartSpec;
  readonly done: (handover: Handover) => void;
}

/**
 * The service's side of the runner pool: ready runners the spawner handed over (with their
 * channels), idle until a run comes, and the runs waiting for one, in order. A run is written
 * straight to the runner's channel and its answer read from it; the spawner hears `taken` once
 * the runner answered (then it refills the pool), `kept` when it took a command run and comes
 * back after it (see #serve), `back` once it is idle again, and `want` when runs wait.
 *
 * A runner that died before it took its run is told apart from one that died after: taking a run
 * begins with moving its slot log onto the run's `task.log`, so a runner whose channel closed
 * without an answer and without that file never took the run (it was killed while idle, before
 * or after the run was written), and the run goes to the next runner. One that did, failed it.
 */
export class PooledRunners {
  readonly #idle: Slot[] = [];
  readonly #waiting: Waiter[] = [];
  readonly #notify: (notice: PoolNotice) => void;
  readonly #renew: Renew;
  /** Ready runners kept idle at most (the spawner says how many); the others are let go. */
  #maxIdle = Infinity;
  #closed = false;

  /**
   * `notify` sends the spawner a notice (starting one if needed); `renew` makes a runner that
   * served a command run the LocalRunner of its next run (see SpawnerLink.renew).
   */
  constructor(notify: (notice: PoolNotice) => void, renew: Renew) {
    this.#notify = notify;
    this.#renew = renew;
  }

  /** The spawner handed over a ready runner: it takes the oldest waiting run, or waits idle. */
  offer(runner: LocalRunner, socket: Socket): void {
    this.#add(runner, new RunnerChannel(socket, runner.pid));
  }

  /**
   * A ready runner takes the oldest waiting run, or waits idle. One back from a command run
   * (`reused`) is idle first, so the next run takes it: the newest idle runners are those let go
   * when the pool shrinks, and the spawner does not replace a runner that comes back.
   */
  #add(runner: LocalRunner, channel: RunnerChannel, reused = false): void {
    if (this.#closed) return channel.destroy();
    const slot: Slot = { runner, channel, answer: channel.answer() };
    // Answered (it was handed a run) or closed: it is not idle any more.
    void slot.answer.then(() => this.#forget(slot));
    const waiter = this.#waiting.shift();
    if (waiter) this.#assign(slot, waiter);
    else if (reused) {
      this.#idle.unshift(slot);
      this.limitIdle(this.#maxIdle);
    }
    else if (this.#idle.length < this.#maxIdle) this.#idle.push(slot);
    else channel.destroy(); // started while the pool was grown: it reads the end of its channel and exits
  }

  /** Keeps at most `max` runners idle from now on, letting the newest go beyond it (they exit). */
  limitIdle(max: number): void {
    this.#maxIdle = max;
    for (const slot of this.#idle.splice(max)) slot.channel.destroy();
  }

  /** Hands a run to an idle runner now, or to the next one offered; answers how it went. */
  take(spec: StartSpec): Promise<Handover> {
    return new Promise((done) => this.#dispatch({ spec, done }, false));
  }

  /** Drops an idle runner (its channel closes: it exits); false when it is not idle here. */
  drop(runner: LocalRunner): boolean {
    const slot = this.#idle.find((s) => s.runner === runner);
    if (!slot) return false;
    this.#forget(slot);
    slot.channel.destroy();
    return true;
  }

  /** Fails the runs waiting for a runner (pooled runners cannot start). */
  failWaiting(message: string): void {
    for (const waiter of this.#waiting.splice(0)) waiter.done({ kind: 'failed', message });
  }

  /** How many runners are idle here, ready for a run. */
  get idle(): number {
    return this.#idle.length;
  }

  /** Whether runs wait for a runner (a new spawner must hear of them). */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Lets idle runners go (they exit) and fails the waiting runs; runs being handed over finish. */
  close(): void {
    this.#closed = true;
    for (const slot of this.#idle.splice(0)) slot.channel.destroy();
    this.failWaiting('the service is stopping');
  }

  #dispatch(waiter: Waiter, first: boolean): void {
    if (this.#closed) return waiter.done({ kind: 'failed', message: 'the service is stopping' });
    const slot = this.#idle.shift();
    if (slot) return this.#assign(slot, waiter);
    if (first) this.#waiting.unshift(waiter);
    else this.#waiting.push(waiter);
    this.#notify({ type: 'want', waiting: this.#waiting.length });
  }

  #forget(slot: Slot): void {
    const i = this.#idle.indexOf(slot);
    if (i >= 0) this.#idle.splice(i, 1);
  }

  /** Writes the run to the runner; its answer (or its channel's close) says how it went. */
  #assign(slot: Slot, waiter: Waiter): void {
    const { runner, channel, answer } = slot;
    void answer.then((answered) => {
      if (answered.type === 'closed' && !tookRun(waiter.spec.logFile)) return this.#dispatch(waiter, true);
      const kept = answered.type === 'accepted' && answered.reusable;
      this.#notify({ type: kept ? 'kept' : 'taken', pid: runner.pid!, waiting: this.#waiting.length });
      if (answered.type === 'accepted') waiter.done({ kind: 'accepted', runner, startedAt: answered.startedAt });
      else if (answered.type === 'declined') waiter.done({ kind: 'declined', message: answered.message });
      else if (answered.type === 'ended') waiter.done({ kind: 'failed', message: 'the pooled task runner ended a run it had not accepted' });
      else waiter.done({ kind: 'failed', message: 'the pooled task runner exited before it took the run' });
      if (kept) void this.#serve(slot);
    });
    const assignment: RunAssignment = { type: 'run', ...waiter.spec };
    channel.socket.write(`${JSON.stringify(assignment)}\n`);
  }

  /**
   * A runner that took a command run says when the run is over (its terminal record written, its
   * leftovers ended), which ends the run here while the process lives on; once it says it is
   * ready again, it is offered as a fresh runner. It exits instead (its channel closed) when the
   * service began to stop its run meanwhile, or when its process is no longer its spawner's.
   * A runner that exits mid-run says nothing more: its spawner reports the exit.
   */
  async #serve(slot: Slot): Promise<void> {
    const { runner, channel } = slot;
    const ended = await channel.answer();
    if (ended.type !== 'ended') return channel.destroy();
    runner.runEnded(ended.exitCode);
    if ((await channel.next()).type !== 'ready' || runner.stopping) return channel.destroy();
    const next = this.#renew(runner);
    if (!next) return channel.destroy();
    this.#notify({ type: 'back', pid: next.pid! });
    this.#add(next, channel, true);
  }
}
