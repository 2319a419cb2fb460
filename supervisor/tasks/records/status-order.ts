import type { TaskRecord } from './task-record.js';

/** A position in the spec's listing order: created_at, then task_id, both descending. */
export interface OrderKey {
  readonly createdAt: string;
  readonly id: string;
}

/** The key of a record that has a status. */
export function keyOf(record: TaskRecord): OrderKey {
  return { createdAt: record.createdAt ?? '', id: record.id };
}

/** True when `a` is listed before `b`. */
function before(a: OrderKey, b: OrderKey): boolean {
  return a.createdAt !== b.createdAt ? a.createdAt > b.createdAt : a.id > b.id;
}

/** Sort comparator of the listing order. */
export function compareListed(a: TaskRecord, b: TaskRecord): number {
  // No key objects: a start sorts a whole history with this.
  const ca = a.createdAt ?? '';
  const cb = b.createdAt ?? '';
  if (ca !== cb) return ca > cb ? -1 : 1;
  return a.id > b.id ? -1 : a.id === b.id ? 0 : 1;
}

/** Index of the first of the sorted `items` not listed before `key` (`after`: nor equal to it). */
export function seek(items: readonly TaskRecord[], key: OrderKey, after = false): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const k = keyOf(items[mid]!);
    if (before(k, key) || (after && k.id === key.id && k.createdAt === key.createdAt)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The records with a status in list_task_statuses order, kept sorted as they change: a change
 * moves one entry (binary search, one splice) instead of re-sorting the whole history.
 */
export class StatusOrder {
  #items: TaskRecord[] = [];
  /** True while a snapshot may still be read: the next change copies the list first. */
  #shared = false;

  get size(): number {
    return this.#items.length;
  }

  /** Replaces `previous` (when listed) by `next` (when it has a status). */
  replace(previous: TaskRecord | undefined, next: TaskRecord | undefined): void {
    if (this.#shared && ((previous && hasStatus(previous)) || (next && hasStatus(next)))) {
      this.#items = this.#items.slice();
      this.#shared = false;
    }
    if (previous && hasStatus(previous)) {
      const at = seek(this.#items, keyOf(previous));
      if (this.#items[at]?.id === previous.id) {
        if (next && hasStatus(next) && next.createdAt === previous.createdAt) {
          this.#items[at] = next;
          return;
        }
        this.#items.splice(at, 1);
      }
    }
    if (next && hasStatus(next)) this.#items.splice(seek(this.#items, keyOf(next)), 0, next);
  }

  /** Sorts `records` once (at start: cheaper than one insert each). */
  rebuild(records: Iterable<TaskRecord>): void {
    this.#items = [...records].filter(hasStatus).sort(compareListed);
    this.#shared = false;
  }

  /**
   * The records in order, as of now (later changes do not alter the answer): the list itself,
   * copied by the next change instead of by every listing (a lister in a loop would otherwise
   * copy the whole history each time, straight into the old generation).
   */
  snapshot(): readonly TaskRecord[] {
    this.#shared = true;
    return this.#items;
  }

  /** The live list, for reads that finish before the next change (do not modify or keep it). */
  view(): readonly TaskRecord[] {
    return this.#items;
  }
}

/** Whether a record is listed; a stored record answers without parsing its status. */
export function hasStatus(record: TaskRecord): boolean {
  return record.state !== undefined;
}
