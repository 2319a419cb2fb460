import type { ProgressEvent } from '../../../schemas/events.js';
import { MAX_STEPS } from '../../../core/task-record/step-limits.js';

/**
 * The progress events of a live Task that followers may still be owed: the latest MAX_STEPS to
 * twice that (trimmed in one go, not one by one), numbered from the Task's first event. A follower
 * further behind than the window skips what it left, as the status keeps only so many steps too:
 * a Task's step count cannot make the service's memory, or what a follower is sent, grow with it.
 */
export class ProgressWindow {
  #events: ProgressEvent[] = [];
  /** Events seen before the first one kept. */
  #base = 0;

  /** Events seen so far (the number after the last one). */
  get count(): number {
    return this.#base + this.#events.length;
  }

  push(event: ProgressEvent): void {
    this.#events.push(event);
    if (this.#events.length >= 2 * MAX_STEPS) {
      const dropped = this.#events.length - MAX_STEPS;
      this.#events.splice(0, dropped);
      this.#base += dropped;
    }
  }

  /** The events numbered `from` up to `to` that are still kept. */
  slice(from: number, to = this.count): ProgressEvent[] {
    return this.#events.slice(Math.max(0, from - this.#base), Math.max(0, to - this.#base));
  }
}
