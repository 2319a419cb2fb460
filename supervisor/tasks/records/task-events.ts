import type { ProgressEvent } from '../../../schemas/events.js';
import type { RetryCause, TaskState, TaskStatus } from '../../../schemas/tasks.js';

/** The one typed map of internal task events. */
export interface TaskEventMap {
  /** A record was written or read anew; `status` is null when the record disappeared; `previous`: the state before. */
  'task:status': { id: string; status: TaskStatus | null; previous: TaskState | undefined };
  /** The log of a live Task grew (or shrank: replaced) to `size` bytes. */
  'task:log': { id: string; size: number };
  /** A progress line was appended to a live Task's `events.jsonl`. */
  'task:progress': { id: string; event: ProgressEvent };
  /**
   * A terminal status the service published as final: once per run it owned (never for an
   * attempt that is retried), and for a Task answered from the result cache. Records found
   * terminal (a start's scan, another tool) are not announced.
   */
  'task:ended': { id: string; status: TaskStatus };
  /** A failed attempt is tried again: `next_run_id` is queued after `delay_s`; `attempt` counts from 1. */
  'task:retrying': { id: string; failed: TaskStatus; next_run_id: string; attempt: number; cause: RetryCause | 'exit_code'; delay_s: number };
}

/** Names of the internal task events. */
export type TaskEventType = keyof TaskEventMap;
type Listener<K extends TaskEventType> = (payload: TaskEventMap[K]) => void;

/** The final events kept from the start until a late subscriber took them (`on` with `replay`). */
const RETAINED = new Set<TaskEventType>(['task:ended', 'task:retrying']);
/** Most events kept: a start that settles more runs than this before anyone replays keeps the first ones. */
const MAX_RETAINED = 1000;

/**
 * A small typed emitter for whoever watches all Tasks at once (a dashboard feed, the plugin
 * installer). Followers of a single Task wait on `TaskIndex.onNextChange` instead, which wakes
 * only that Task's followers.
 */
export class TaskEvents {
  readonly #listeners: { [K in TaskEventType]: Set<Listener<K>> } = {
    'task:status': new Set(),
    'task:log': new Set(),
    'task:progress': new Set(),
    'task:ended': new Set(),
    'task:retrying': new Set(),
  };

  /**
   * `task:ended` and `task:retrying` events emitted since the service began, kept for a
   * subscriber built after the Tasks (webhooks): runs a start settles (found dead, adopted ones
   * ending) end before it exists. Null once one took them (`release`).
   */
  #retained: Array<{ type: TaskEventType; payload: TaskEventMap[TaskEventType] }> | null = [];

  /**
   * Subscribes; returns the unsubscribe function. With `replay`, the kept final events of that
   * type are heard first (call `release` once every replaying subscriber is on).
   */
  on<K extends TaskEventType>(type: K, listener: Listener<K>, opts: { replay?: boolean } = {}): () => void {
    const set = this.#listeners[type] as Set<Listener<K>>;
    if (opts.replay) for (const kept of this.#retained ?? []) if (kept.type === type) this.#call(type, listener, kept.payload as TaskEventMap[K]);
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Stops keeping final events (the subscriber that needed them has them). */
  release(): void {
    this.#retained = null;
  }

  emit<K extends TaskEventType>(type: K, payload: TaskEventMap[K]): void {
    if (this.#retained && RETAINED.has(type) && this.#retained.length < MAX_RETAINED) this.#retained.push({ type, payload });
    for (const listener of this.#listeners[type] as Set<Listener<K>>) this.#call(type, listener, payload);
  }

  #call<K extends TaskEventType>(type: K, listener: Listener<K>, payload: TaskEventMap[K]): void {
    try {
      listener(payload);
    } catch (err) {
      // One broken subscriber must not stop the index or the others.
      console.error(`taskyard: ${type} listener failed`, err);
    }
  }
}
