import { lstatSync } from 'node:fs';
import type { Socket } from 'node:net';
import { onMessageLines } from '../../../runner/message-check.js';
import { RUNNER_EVENTS, type PoolNotice, type RunAssignment, type RunnerEvent, type StartSpec } from '../../../runner/spawner-messages.js';
import type { LocalRunner } from './local-runner.js';

/** How a pooled runner answered a run. */
export type Handover =
  /** It wrote its `running` record (started_at) and runs the run. */
  | { kind: 'accepted'; runner: LocalRunner; startedAt: string | null }
  /** It could not take the run (its log is on another file system): start a runner for it directly. */
  | { kind: 'declined'; message: string }
  | { kind: 'failed'; message: string };

/** A ready runner's first answer on its channel, or `closed` when the channel closed before any. */
type Answer = Exclude<RunnerEvent, { type: 'ready' }> | { type: 'closed' };

/**
 * A ready runner the spawner handed over, with its channel, and its answer as one awaited value,
 * made when it is offered: an idle runner whose channel closes is forgotten by the same value.
 */
interface Slot {
  readonly runner: LocalRunner;
  readonly channel: Socket;
  readonly answer: Promise<Answer>;
}

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
 * the runner answered (then it refills the pool) and `want` when runs wait.
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
  /** Ready runners kept idle at most (the spawner says how many); the others are let go. */
  #maxIdle = Infinity;
  #closed = false;

  /** `notify` sends the spawner a notice (starting one if needed). */
  constructor(notify: (notice: PoolNotice) => void) {
    this.#notify = notify;
  }

  /** The spawner handed over a ready runner: it takes the oldest waiting run, or waits idle. */
  offer(runner: LocalRunner, channel: Socket): void {
    // The service's own handles keep it alive; an idle runner must not keep a stopping one up.
    channel.unref();
    channel.on('error', () => undefined); // its close says what matters
    if (this.#closed) return void channel.destroy();
    // Read from the start (an idle runner says nothing; its channel's end is then seen at once).
    const answer = new Promise<Answer>((resolve) => {
      const refused = (error: string) => console.error(`taskyard: pooled runner ${runner.pid}: ${error}; ignored`);
      onMessageLines(channel, RUNNER_EVENTS, (event) => {
        if (event.type !== 'ready') resolve(event);
      }, refused);
      // 'close' comes after everything the runner wrote was read: no answer by then, none will come.
      channel.once('close', () => resolve({ type: 'closed' }));
    });
    const slot: Slot = { runner, channel, answer };
    // Answered (it was handed a run) or closed: it is not idle any more.
    void answer.then(() => this.#forget(slot));
    const waiter = this.#waiting.shift();
    if (waiter) this.#assign(slot, waiter);
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
      this.#notify({ type: 'taken', pid: runner.pid!, waiting: this.#waiting.length });
      if (answered.type === 'accepted') waiter.done({ kind: 'accepted', runner, startedAt: answered.startedAt });
      else if (answered.type === 'declined') waiter.done({ kind: 'declined', message: answered.message });
      else waiter.done({ kind: 'failed', message: 'the pooled task runner exited before it took the run' });
    });
    const assignment: RunAssignment = { type: 'run', ...waiter.spec };
    channel.write(`${JSON.stringify(assignment)}\n`);
  }
}
