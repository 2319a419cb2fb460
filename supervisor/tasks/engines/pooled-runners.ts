import { lstatSync } from 'node:fs';
import type { Socket } from 'node:net';
import { onJsonLines, type PoolNotice, type RunAssignment, type RunnerEvent, type RunSpec } from '../../../runner/spawner-messages.js';
import type { RunnerEnd } from './executor.js';

/** A ready pooled runner the spawner handed over: its pid, its channel, and its end (reported by the spawner). */
export interface PooledRunner {
  readonly pid: number;
  readonly channel: Socket;
  readonly ended: Promise<RunnerEnd>;
}

/** How a pooled runner answered a run. */
export type Handover =
  /** It wrote its `running` record (started_at) and runs the run. */
  | { kind: 'accepted'; runner: PooledRunner; startedAt: string | null }
  /** It could not take the run (its log is on another file system): start a runner for it directly. */
  | { kind: 'declined'; message: string }
  | { kind: 'failed'; message: string };

/** An offered runner and who hears its channel's messages and close (an idle runner is forgotten at close). */
interface Held {
  readonly runner: PooledRunner;
  onEvent: (event: RunnerEvent) => void;
  onClose: () => void;
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
  readonly req: RunSpec;
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
  readonly #idle: Held[] = [];
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
  offer(runner: PooledRunner): void {
    const { channel } = runner;
    // The service's own handles keep it alive; an idle runner must not keep a stopping one up.
    channel.unref();
    channel.on('error', () => undefined); // its close says what matters
    if (this.#closed) return void channel.destroy();
    // Read from the start (an idle runner says nothing; its channel's end is then seen at once).
    const held: Held = { runner, onEvent: () => undefined, onClose: () => this.#forget(held) };
    onJsonLines<RunnerEvent>(channel, (event) => held.onEvent(event));
    channel.once('close', () => held.onClose());
    const waiter = this.#waiting.shift();
    if (waiter) this.#assign(held, waiter);
    else if (this.#idle.length < this.#maxIdle) this.#idle.push(held);
    else channel.destroy(); // started while the pool was grown: it reads the end of its channel and exits
  }

  /** Keeps at most `max` runners idle from now on, letting the newest go beyond it (they exit). */
  limitIdle(max: number): void {
    this.#maxIdle = max;
    for (const held of this.#idle.splice(max)) held.runner.channel.destroy();
  }

  /** Hands a run to an idle runner now, or to the next one offered; answers how it went. */
  take(req: RunSpec): Promise<Handover> {
    return new Promise((done) => this.#dispatch({ req, done }, false));
  }

  /** Drops an idle runner (its channel closes: it exits); false when it is not idle here. */
  drop(pid: number): boolean {
    const held = this.#idle.find((h) => h.runner.pid === pid);
    if (!held) return false;
    this.#forget(held);
    held.runner.channel.destroy();
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
    for (const held of this.#idle.splice(0)) held.runner.channel.destroy();
    this.failWaiting('the service is stopping');
  }

  #dispatch(waiter: Waiter, first: boolean): void {
    if (this.#closed) return waiter.done({ kind: 'failed', message: 'the service is stopping' });
    const held = this.#idle.shift();
    if (held) return this.#assign(held, waiter);
    if (first) this.#waiting.unshift(waiter);
    else this.#waiting.push(waiter);
    this.#notify({ type: 'want', waiting: this.#waiting.length });
  }

  #forget(held: Held): void {
    const i = this.#idle.indexOf(held);
    if (i >= 0) this.#idle.splice(i, 1);
  }

  #assign(held: Held, waiter: Waiter): void {
    const { runner } = held;
    const { channel, pid } = runner;
    let answered = false;
    const finish = (handover: Handover) => {
      if (answered) return;
      answered = true;
      this.#notify({ type: 'taken', pid, waiting: this.#waiting.length });
      waiter.done(handover);
    };
    held.onEvent = (event) => {
      if (event.type === 'accepted') finish({ kind: 'accepted', runner, startedAt: event.startedAt });
      else if (event.type === 'declined') finish({ kind: 'declined', message: event.message });
    };
    // 'close' comes after everything the runner wrote was read: no answer by then, none will come.
    held.onClose = () => {
      if (answered) return;
      if (!tookRun(waiter.req.logFile)) {
        answered = true;
        return this.#dispatch(waiter, true);
      }
      finish({ kind: 'failed', message: 'the pooled task runner exited before it took the run' });
    };
    const assignment: RunAssignment = { ...waiter.req, type: 'run' };
    channel.write(`${JSON.stringify(assignment)}\n`);
  }
}
