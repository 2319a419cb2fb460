/** Queued body bytes above which the connection stops reading until the consumer catches up. */
const HIGH_WATER_BYTES = 256 * 1024;

/** How a channel steers the connection it is fed from. */
export interface ChannelSource {
  pause(): void;
  resume(): void;
  /** Gives up the connection: the consumer left before the body ended. */
  destroy(): void;
}

/**
 * A response body handed from a connection's data events to one async reader, with backpressure:
 * the connection is paused while more than HIGH_WATER_BYTES wait unread. Leaving the loop early
 * (or `destroy()`) drops the connection.
 */
export class BodyChannel implements AsyncIterable<Buffer> {
  #queue: Buffer[] = [];
  #queued = 0;
  #paused = false;
  #ended = false;
  #error: Error | undefined;
  #wake: (() => void) | undefined;

  constructor(private readonly source: ChannelSource) {}

  /** A body already read whole, iterated like a streamed one. */
  static async *of(whole: Buffer): AsyncGenerator<Buffer> {
    if (whole.length > 0) yield whole;
  }

  push(chunk: Buffer): void {
    if (this.#ended) return;
    this.#queue.push(chunk);
    this.#queued += chunk.length;
    if (!this.#paused && this.#queued > HIGH_WATER_BYTES) {
      this.#paused = true;
      this.source.pause();
    }
    this.#notify();
  }

  /** The body is complete: the reader gets what is queued, then the end. */
  end(): void {
    this.#ended = true;
    this.#notify();
  }

  /** The body broke off: the reader gets what is queued, then `err`. */
  fail(err: Error): void {
    this.#error = err;
    this.#ended = true;
    this.#notify();
  }

  destroy(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#queue = [];
    this.source.destroy();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    try {
      for (;;) {
        const chunk = this.#queue.shift();
        if (chunk) {
          this.#queued -= chunk.length;
          if (this.#paused && this.#queued <= HIGH_WATER_BYTES / 2) {
            this.#paused = false;
            this.source.resume();
          }
          yield chunk;
          continue;
        }
        if (this.#error) throw this.#error;
        if (this.#ended) return;
        await new Promise<void>((resolve) => (this.#wake = resolve));
      }
    } finally {
      this.destroy();
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
