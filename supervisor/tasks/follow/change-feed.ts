import { BusinessError } from '../../../core/errors.js';
import type { TaskIndex } from '../records/task-index.js';

/** What the feed listens to: the task index's one-shot change listeners. */
export type ChangeSource = Pick<TaskIndex, 'onNextChange'>;

/** The next change of one Task, shared by everyone waiting for it. */
interface Pending {
  readonly promise: Promise<void>;
  readonly fire: () => void;
  timer: NodeJS.Timeout;
  pollMs: number;
}

/**
 * One notification per Task change for all its followers: ten thousand followers of a Task wait
 * on one promise, one index listener and one timer (the staleness bound: the smallest poll asked
 * for), instead of a timer, an abort listener and a listener entry each per change.
 */
export class ChangeFeed {
  readonly #index: ChangeSource;
  readonly #pending = new Map<string, Pending>();

  constructor(index: ChangeSource) {
    this.#index = index;
  }

  /** Resolves at the Task's next change, or within `pollMs` at the latest. */
  next(id: string, pollMs: number): Promise<void> {
    const known = this.#pending.get(id);
    if (known) {
      if (pollMs < known.pollMs) {
        clearTimeout(known.timer);
        known.pollMs = pollMs;
        known.timer = setTimeout(known.fire, pollMs);
      }
      return known.promise;
    }
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    const fire = () => {
      if (this.#pending.get(id) !== pending) return;
      this.#pending.delete(id);
      clearTimeout(pending.timer);
      stopListening();
      resolve();
    };
    const pending: Pending = { promise, fire, timer: setTimeout(fire, pollMs), pollMs };
    this.#pending.set(id, pending);
    const stopListening = this.#index.onNextChange(id, fire);
    return promise;
  }
}

const feeds = new WeakMap<TaskIndex, ChangeFeed>();

/** The change feed of an index (one per index, made on first use). */
export function changeFeedOf(index: TaskIndex): ChangeFeed {
  let feed = feeds.get(index);
  if (!feed) feeds.set(index, (feed = new ChangeFeed(index)));
  return feed;
}

/**
 * One follower's waits: the shared change, or its own abort. The abort listener is added once
 * per follow (see `close`), not once per change.
 */
export class FollowerWait {
  readonly #signal: AbortSignal;
  #wake: (() => void) | null = null;
  readonly #onAbort = () => this.#wake?.();

  constructor(signal: AbortSignal) {
    this.#signal = signal;
    signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** Waits for `change` (a ChangeFeed promise); throws CancelledError once the caller went away. */
  async until(change: Promise<void>): Promise<void> {
    if (!this.#signal.aborted) {
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        void change.then(resolve);
      });
      this.#wake = null;
    }
    this.check();
  }

  /** Throws CancelledError once the caller went away. */
  check(): void {
    if (this.#signal.aborted) throw new BusinessError('CancelledError', 'the caller went away');
  }

  close(): void {
    this.#signal.removeEventListener('abort', this.#onAbort);
  }
}
