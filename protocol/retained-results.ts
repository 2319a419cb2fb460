/** Why a finished result is no longer kept. */
export type GoneReason = 'expired' | 'dropped';

export interface RetentionLimits {
  /** Finished results kept at most. */
  readonly count: number;
  /** Their total size at most (bytes). */
  readonly bytes: number;
  /** How many ids of results no longer kept are remembered, to say why they are gone. */
  readonly remembered: number;
}

interface Kept {
  readonly bytes: number;
  readonly timer: NodeJS.Timeout;
}

/**
 * The bookkeeping of finished results held for their time to live, bounded in count and total
 * size: past either bound the oldest are dropped before their ttl. `forget` is told each id that
 * goes (its owner frees the result), and `gone` says why an id is no longer kept, for a while.
 */
export class RetainedResults {
  /** Finished results in the order they finished (a Map keeps insertion order). */
  readonly #kept = new Map<string, Kept>();
  readonly #gone = new Map<string, GoneReason>();
  #bytes = 0;

  constructor(
    readonly limits: RetentionLimits,
    private readonly forget: (id: string) => void,
  ) {}

  /** Keeps a finished result of `bytes` for `ttlMs`, dropping the oldest ones past the bounds. */
  keep(id: string, bytes: number, ttlMs: number): void {
    const timer = setTimeout(() => this.#release(id, 'expired'), ttlMs).unref();
    this.#kept.set(id, { bytes, timer });
    this.#bytes += bytes;
    for (const oldest of this.#kept.keys()) {
      if (this.#kept.size <= this.limits.count && this.#bytes <= this.limits.bytes) break;
      this.#release(oldest, 'dropped');
    }
  }

  /** Why `id` is no longer kept, if it was kept lately. */
  gone(id: string): GoneReason | undefined {
    return this.#gone.get(id);
  }

  /** The total size of the results kept now (bytes). */
  get bytes(): number {
    return this.#bytes;
  }

  #release(id: string, reason: GoneReason): void {
    const kept = this.#kept.get(id);
    if (!kept) return;
    clearTimeout(kept.timer);
    this.#kept.delete(id);
    this.#bytes -= kept.bytes;
    this.#gone.set(id, reason);
    if (this.#gone.size > this.limits.remembered) this.#gone.delete(this.#gone.keys().next().value!);
    this.forget(id);
  }
}
