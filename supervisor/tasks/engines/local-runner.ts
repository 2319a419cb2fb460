import type { Runner, RunnerEnd } from './executor.js';
import { untilGone } from './runner-processes.js';

/**
 * One runner process on this machine, made when it is asked for (a direct start), handed over
 * ready (a pooled runner) or found alive (adopted), and carrying its own end: `ended` is made with
 * it and settled once, by whichever of these comes first: its spawner reports its exit (only a
 * parent knows the code and signal), the start fails, or (its spawner dead, or never ours) /proc
 * shows it gone. The run it serves is known from the start, or once a pooled runner accepts it.
 */
export class LocalRunner implements Runner {
  readonly ended: Promise<RunnerEnd>;
  /** Resolves once the process is up (its pid known); rejects with why it could not start. */
  readonly started: Promise<LocalRunner>;
  #pid: number | null;
  #runId: string | null;
  #startedAt: string | null = null;
  /** Set when its spawner died before the run it serves was known: it is watched from then on. */
  #orphanedBy: AbortSignal | null = null;
  /** Its run is over but the process lives on, serving another run (see runEnded). */
  #released = false;
  /** The service is stopping its run: the process must not serve another. */
  #stopping = false;
  readonly #end: (end: RunnerEnd) => void;
  readonly #up: (up: boolean | Error) => void;

  private constructor(pid: number | null, runId: string | null) {
    this.#pid = pid;
    this.#runId = runId;
    let end!: (end: RunnerEnd) => void;
    this.ended = new Promise<RunnerEnd>((resolve) => (end = resolve));
    this.#end = end;
    let up!: (up: boolean | Error) => void;
    this.started = new Promise<LocalRunner>((resolve, reject) => (up = (value) => (value instanceof Error ? reject(value) : resolve(this))));
    this.#up = up;
    this.started.catch(() => undefined); // its asker hears the rejection; nobody else must
    if (pid !== null) up(true);
  }

  /** A runner asked of the spawner for `runId` (its pid comes with the answer). */
  static requested(runId: string): LocalRunner {
    return new LocalRunner(null, runId);
  }

  /** A pooled runner the spawner reports ready (its run comes when it accepts one). */
  static ready(pid: number): LocalRunner {
    return new LocalRunner(pid, null);
  }

  /** A live runner of `runId` that is not this service's child (found in /proc): watched there. */
  static found(pid: number, runId: string, startTime: string, stopping: AbortSignal): LocalRunner {
    const runner = new LocalRunner(pid, runId);
    runner.#watch(stopping, startTime);
    return runner;
  }

  get pid(): number | null {
    return this.#pid;
  }

  /** The run it serves; null for a pooled runner that has not accepted one. */
  get runId(): string | null {
    return this.#runId;
  }

  /** When a pooled runner said it wrote its `running` record; null otherwise. */
  get startedAt(): string | null {
    return this.#startedAt;
  }

  /** The spawner started it (a direct start). */
  spawned(pid: number): void {
    this.#pid = pid;
    this.#up(true);
  }

  /** A runner asked for whose spawner died unanswered, found alive in /proc: watched there. */
  foundAlive(pid: number, startTime: string, stopping: AbortSignal): void {
    this.spawned(pid);
    this.#watch(stopping, startTime);
  }

  /** It could not be started. */
  failed(message: string): void {
    this.#up(new Error(message));
    this.#settle({ kind: 'spawn-failed', message });
  }

  /** A pooled runner accepted `runId`; if its spawner died meanwhile, it is watched in /proc from now on. */
  serves(runId: string, startedAt: string | null): void {
    this.#runId = runId;
    this.#startedAt = startedAt;
    if (this.#orphanedBy) this.#watch(this.#orphanedBy);
  }

  /**
   * A pooled runner that served a command run says the run is over (its terminal record written,
   * its leftovers ended) and lives on for another run, as another LocalRunner: this one's end is
   * the run's end, and nothing may stop the process for it any more.
   */
  runEnded(exitCode: number): void {
    this.#released = true;
    this.#settle({ kind: 'exited', code: exitCode, signal: null });
  }

  /** Whether the service is stopping its run (then it may serve no other). */
  get stopping(): boolean {
    return this.#stopping;
  }

  /** The service begins to stop its run; false when the process already serves another run. */
  beginStop(): boolean {
    this.#stopping = true;
    return !this.#released;
  }

  /** Its spawner reported its exit. */
  exited(code: number | null, signal: NodeJS.Signals | null): void {
    this.#settle({ kind: 'exited', code, signal });
  }

  /** Its spawner died: nobody reports its exit any more, so /proc is watched once its run is known. */
  orphaned(stopping: AbortSignal): void {
    if (this.#runId === null) this.#orphanedBy = stopping;
    else this.#watch(stopping);
  }

  #watch(stopping: AbortSignal, startTime?: string): void {
    const pid = this.#pid!;
    untilGone(pid, this.#runId!, startTime, stopping).catch((err: unknown) => console.error(`taskyard: watching the runner ${pid} failed`, err)).finally(() => this.#settle({ kind: 'lost', pid }));
  }

  /** The first end settles `ended`; later ones change nothing (a promise settles once). */
  #settle(end: RunnerEnd): void {
    this.#end(end);
  }
}
