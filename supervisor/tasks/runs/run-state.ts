import type { TaskState, TaskStatus } from '../../../schemas/tasks.js';
import type { RunnerEnd } from '../engines/executor.js';

/**
 * The phases of one run, as its owner (TaskRun) lives them:
 * - `queued`: submitted here, waiting for a slot and its resources;
 * - `found`: a queued or running record this service did not start (a restart, another tool);
 * - `starting`: admitted, its runner being started;
 * - `running`: a runner lives (started or adopted) and its files are watched;
 * - `ended`: the runner is gone (or never came): the owner settles the record;
 * - `published`: the terminal status is shown and the Task ID released (final);
 * - `left`: the service stopped: the runner lives on, its record stays as it is (final).
 */
export type RunPhase = 'queued' | 'found' | 'starting' | 'running' | 'ended' | 'published' | 'left';

/**
 * Why a run ends. The first one set stands (execa's `reason ??=`): a cancel asked before the time
 * limit fired is a cancel, a time limit that fired first stays the end even if a cancel follows.
 */
export type EndReason =
  /** `cancel` was asked. */
  | { readonly kind: 'cancel' }
  /** The service is stopping and let go of the runner (which lives on). */
  | { readonly kind: 'closing' }
  /** A queued record found without its service: its run never started. */
  | { readonly kind: 'not-started' }
  /** The owner itself failed (a bug): the run is published without a record. */
  | { readonly kind: 'fault' }
  /** The runner's own end: exited, lost, spawn failed, ended by its engine, or the time limit. */
  | RunnerEnd;

/** What a transition needs besides being in the table. */
interface Guard {
  readonly test: (reason: EndReason | undefined) => boolean;
  readonly needs: string;
}

const WITH_REASON: Guard = { test: (reason) => reason !== undefined, needs: 'a reason to end' };
const WITHOUT_REASON: Guard = { test: (reason) => reason === undefined, needs: 'no reason to end (a cancelled run does not start)' };

/** Every move a run may make, from → to, with its guard (null: none). Anything else throws. */
export const RUN_TRANSITIONS: { readonly [From in RunPhase]: { readonly [To in RunPhase]?: Guard | null } } = {
  queued: { starting: WITHOUT_REASON, ended: WITH_REASON },
  found: { running: null, ended: WITH_REASON, left: WITH_REASON },
  // A cancel asked while starting does not stop the start: the runner is stopped once it runs.
  starting: { running: null, ended: WITH_REASON },
  // `published` straight from `running`: the runner wrote its terminal record and still exits.
  running: { published: null, ended: WITH_REASON, left: WITH_REASON },
  ended: { published: null },
  published: {},
  left: {},
};

/** A transition the table does not allow: a bug in the owner, never a state a Task can cause. */
export class RunStateError extends Error {
  override readonly name = 'RunStateError';
}

/** Order of the non-terminal states a run's record may show: it never goes back. */
const SHOWN_RANK: Partial<Record<TaskState, number>> = { queued: 0, running: 1 };

/** The state machine's single deferred: settled on each phase change or end reason, then replaced. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * The state of one run: its phase (moved only along RUN_TRANSITIONS), why it ends (set once), and
 * the statuses it may show. Owners await it (`until`) instead of keeping resolvers of their own.
 */
export class RunState {
  readonly runId: string;
  #phase: RunPhase;
  #reason: EndReason | undefined;
  /** The non-terminal state this run's record shows, as the run wrote or found it. */
  #shown: TaskState | undefined;
  #published: { status: TaskStatus | null; writtenHere: boolean } | undefined;
  #moved = deferred();

  constructor(runId: string, phase: 'queued' | 'found', shown?: TaskState) {
    this.runId = runId;
    this.#phase = phase;
    this.#shown = shown;
  }

  get phase(): RunPhase {
    return this.#phase;
  }

  get reason(): EndReason | undefined {
    return this.#reason;
  }

  /** The published terminal status (null: none); undefined until published. */
  get terminal(): TaskStatus | null | undefined {
    return this.#published?.status;
  }

  /** Whether the service itself recorded this run as cancelled (its cancel caused the record). */
  get cancelledHere(): boolean {
    return this.#reason?.kind === 'cancel' && this.#published?.writtenHere === true && this.#published.status?.state === 'cancelled';
  }

  /** Moves to `next`; throws RunStateError when the table has no such move or its guard refuses. */
  to(next: RunPhase): void {
    const from = this.#phase;
    const guard = RUN_TRANSITIONS[from][next];
    if (guard === undefined) throw new RunStateError(`run ${this.runId}: no transition from ${from} to ${next}`);
    if (guard && !guard.test(this.#reason)) throw new RunStateError(`run ${this.runId}: the transition from ${from} to ${next} needs ${guard.needs}`);
    this.#phase = next;
    this.#changed();
  }

  /**
   * Sets why the run ends, unless a reason was set before or the service let go of it; true when
   * this one stands. A published run may still get one: the time limit stops a runner that wrote
   * its terminal record but does not exit.
   */
  end(reason: EndReason): boolean {
    if (this.#reason !== undefined || this.#phase === 'left') return false;
    this.#reason = reason;
    this.#changed();
    return true;
  }

  /**
   * Whether a non-terminal status of this run may be shown now: at submit the queued record, while
   * a runner lives what it writes, never a state behind the one shown, nor another run's status,
   * nor anything once the run has ended (a terminal status is published instead).
   */
  show(status: TaskStatus): boolean {
    const rank = SHOWN_RANK[status.state];
    if (status.run_id !== this.runId || rank === undefined) return false;
    const submitted = this.#phase === 'queued' && this.#shown === undefined && status.state === 'queued';
    if (!submitted && this.#phase !== 'running') return false;
    if (this.#shown !== undefined && rank < SHOWN_RANK[this.#shown]!) return false;
    this.#shown = status.state;
    return true;
  }

  /**
   * Publishes the terminal status (null: the directory holds another run, or the owner failed):
   * false when published already; throws from a phase that cannot publish.
   */
  publish(status: TaskStatus | null, writtenHere = false): boolean {
    if (this.#phase === 'published') return false;
    if (status && status.run_id !== this.runId) throw new RunStateError(`run ${this.runId}: cannot publish the status of run ${status.run_id}`);
    this.to('published');
    this.#published = { status, writtenHere };
    return true;
  }

  /** Resolves once `test` holds (checked at every phase change and end reason). */
  async until(test: () => boolean): Promise<void> {
    while (!test()) await this.#moved.promise;
  }

  #changed(): void {
    const { resolve } = this.#moved;
    this.#moved = deferred();
    resolve();
  }
}

/** What settling a run ended for `reason` tells the record: the runner's end, and whether it was cancelled. */
export function settlementOf(reason: EndReason | undefined): { end: RunnerEnd | null; cancelled: boolean } {
  if (reason === undefined) return { end: null, cancelled: false };
  switch (reason.kind) {
    case 'cancel':
      return { end: null, cancelled: true };
    case 'not-started':
    case 'closing':
    case 'fault':
      return { end: null, cancelled: false };
    default:
      return { end: reason, cancelled: false };
  }
}
