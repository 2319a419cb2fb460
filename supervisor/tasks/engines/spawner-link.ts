import { fork, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { SPAWNER_EVENTS, type PoolNotice, type SpawnerEvent, type StartSpec } from '../../../runner/spawner-messages.js';
import { SPAWNER } from '../../../runner/runner-file.js';
import { LocalRunner } from './local-runner.js';

/** A direct start asked of a spawner: the run and the runner made for it. */
export interface DirectStart {
  readonly spec: StartSpec;
  readonly runner: LocalRunner;
}

/** What the executor hears from one spawner. */
export interface SpawnerListener {
  /** A pooled runner is ready; `channel` is its end of the runner's channel. */
  ready(runner: LocalRunner, channel: Socket): void;
  /** Pool news: `idle-limit` or `pool-failing`. */
  pool(event: Extract<SpawnerEvent, { type: 'idle-limit' | 'pool-failing' }>): void;
  /**
   * The spawner exited: `runners` are those it started and that had not exited (nobody reports
   * their exits now), `unanswered` the direct starts it may or may not have carried out.
   */
  exited(link: SpawnerLink, runners: LocalRunner[], unanswered: DirectStart[]): void;
}

/**
 * One spawner process (runner/spawner.ts) and the runners it started. Its messages are checked
 * (one that is malformed is logged and ignored). The runners are kept by pid, since the spawner
 * reports each exit by pid; the direct starts it has not answered by run_id, since it answers each
 * by run_id. Both hold runner objects, each settling its own end.
 */
export class SpawnerLink {
  readonly #child: ChildProcess;
  readonly #listener: SpawnerListener;
  readonly #runners = new Map<number, LocalRunner>();
  readonly #asked = new Map<string, DirectStart>();
  /** A send failed: the process is going (its exit may not be processed yet). */
  #broken = false;

  constructor(args: string[], env: NodeJS.ProcessEnv, listener: SpawnerListener) {
    this.#listener = listener;
    // Not the service's flags (a debugger, a test runner's loader hooks); --no-warnings: the
    // spawner reports a runner the service could not receive once, not once per runner.
    const child = fork(SPAWNER, args, { execArgv: ['--no-warnings'], env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
    child.on('message', (message: unknown, channel?: Socket) => this.#onMessage(message, channel));
    child.once('exit', () => this.#onExit());
    child.on('error', () => undefined); // its exit says the same
    // The service's own handles keep it alive; the spawner must not keep a stopping one up.
    child.unref();
    child.channel?.unref();
    this.#child = child;
  }

  /** Whether orders can be sent to it. */
  get usable(): boolean {
    return this.#child.connected && !this.#broken;
  }

  /** Asks it to start a runner for `start`; `unsent` hears when the order never reached it (it started nothing). */
  spawn(start: DirectStart, unsent: (err: Error) => void): void {
    const { runId } = start.spec;
    this.#asked.set(runId, start);
    this.#child.send({ type: 'spawn', ...start.spec }, (err) => {
      if (!err) return;
      // The spawner died before it read the order (its exit may not be processed yet): the
      // order certainly started nothing, so a fresh spawner may take it.
      this.#asked.delete(runId);
      this.#broken = true;
      unsent(err);
    });
  }

  /**
   * A pooled runner of this spawner whose command run ended and that is ready for another: the
   * same process as a new LocalRunner (its exit, reported by pid, settles the run it serves next).
   * Undefined when the process is not this spawner's live runner (it exited, or its spawner died).
   */
  renew(runner: LocalRunner): LocalRunner | undefined {
    const { pid } = runner;
    if (pid === null || this.#runners.get(pid) !== runner) return undefined;
    const next = LocalRunner.ready(pid);
    this.#runners.set(pid, next);
    return next;
  }

  notify(notice: PoolNotice): void {
    this.#child.send(notice, () => undefined);
  }

  /** Closes the channel: the spawner exits, its runners keep running. */
  disconnect(): void {
    if (this.#child.connected) this.#child.disconnect();
  }

  #onMessage(message: unknown, channel?: Socket): void {
    const checked = SPAWNER_EVENTS.check(message);
    if (!checked.ok) {
      channel?.destroy();
      return console.error(`taskyard: ${checked.error}; ignored`);
    }
    const event = checked.message;
    switch (event.type) {
      case 'ready': {
        if (!channel) return;
        const runner = LocalRunner.ready(event.pid);
        this.#runners.set(event.pid, runner);
        return this.#listener.ready(runner, channel);
      }
      case 'exited':
        this.#runners.get(event.pid)?.exited(event.code, event.signal);
        this.#runners.delete(event.pid);
        return;
      case 'spawned':
      case 'spawn-failed': {
        const start = this.#asked.get(event.runId);
        if (!start) return;
        this.#asked.delete(event.runId);
        if (event.type === 'spawn-failed') return start.runner.failed(event.message);
        this.#runners.set(event.pid, start.runner);
        return start.runner.spawned(event.pid);
      }
      default:
        return this.#listener.pool(event);
    }
  }

  #onExit(): void {
    const runners = [...this.#runners.values()];
    const unanswered = [...this.#asked.values()];
    this.#runners.clear();
    this.#asked.clear();
    this.#listener.exited(this, runners, unanswered);
  }
}
