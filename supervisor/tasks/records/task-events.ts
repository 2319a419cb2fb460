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

  /** Subscribes; returns the unsubscribe function. */
  on<K extends TaskEventType>(type: K, listener: Listener<K>): () => void {
    const set = this.#listeners[type] as Set<Listener<K>>;
    set.add(listener);
    return () => set.delete(listener);
  }

  emit<K extends TaskEventType>(type: K, payload: TaskEventMap[K]): void {
    for (const listener of this.#listeners[type] as Set<Listener<K>>) {
      try {
        listener(payload);
      } catch (err) {
        // One broken subscriber must not stop the index or the others.
        console.error(`taskyard: ${type} listener failed`, err);
      }
    }
  }
}
