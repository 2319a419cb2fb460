/**
 * Turns push-style body chunks (uWS `onData`) into a pull-style async iterable, pausing the
 * producer when too much is buffered so a slow consumer never makes memory grow with the body.
 */
export class BodyQueue implements AsyncIterable<Uint8Array> {
  readonly #chunks: Uint8Array[] = [];
  #buffered = 0;
  /** The last chunk arrived. */
  #done = false;
  /** Why reading cannot go on: the client is gone, or the body is being discarded. */
  #error: Error | null = null;
  #clientGone = false;
  #wake: (() => void) | null = null;
  #paused = false;
  #discarding = false;
  #ended: (() => void) | null = null;

  constructor(
    private readonly pause: () => void,
    private readonly resume: () => void,
    // 4 MiB: with 1 MiB, uWS was paused after two of its 512 KiB chunks and uploads ran ~35 % slower.
    private readonly highWater = 4 * 1024 * 1024,
  ) {}

  /** Whether nothing more will arrive: the whole body is in, or the client is gone. */
  get complete(): boolean {
    return this.#done || this.#clientGone;
  }

  /** Whether chunks are dropped as they come (see `discard`): the producer need not copy them. */
  get discarding(): boolean {
    return this.#discarding;
  }

  push(chunk: Uint8Array, last: boolean): void {
    if (last) this.#done = true;
    if (this.#discarding) {
      if (last) this.#settleDiscard();
      return;
    }
    if (chunk.byteLength) {
      this.#chunks.push(chunk);
      this.#buffered += chunk.byteLength;
    }
    if (!this.#done && !this.#paused && this.#buffered >= this.highWater) {
      this.#paused = true;
      this.pause();
    }
    this.#notify();
  }

  /** The client went away: a waiting reader fails with `error`. */
  fail(error: Error): void {
    this.#clientGone = true;
    this.#error ??= error;
    this.#settleDiscard();
    this.#notify();
  }

  /**
   * Drops the buffered chunks and every one still to come, reading on at full speed, and resolves
   * once nothing more will arrive. For answers given before the body was read: the client can
   * finish sending and then read the answer, instead of meeting a reset connection.
   */
  discard(): Promise<void> {
    this.#discarding = true;
    this.#chunks.length = 0;
    this.#buffered = 0;
    if (this.#paused) {
      this.#paused = false;
      this.resume();
    }
    this.#error ??= new Error('the request body was discarded');
    this.#notify();
    if (this.complete) return Promise.resolve();
    return new Promise<void>((resolve) => (this.#ended = resolve));
  }

  #settleDiscard(): void {
    const ended = this.#ended;
    this.#ended = null;
    ended?.();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  /** Hand-written rather than an async generator: this runs for every request with a body. */
  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    const next = async (): Promise<IteratorResult<Uint8Array>> => {
      for (;;) {
        const chunk = this.#chunks.shift();
        if (chunk) {
          this.#buffered -= chunk.byteLength;
          if (this.#paused && this.#buffered < this.highWater / 2) {
            this.#paused = false;
            this.resume();
          }
          return { value: chunk, done: false };
        }
        if (this.#error) throw this.#error;
        if (this.#done) return { value: undefined, done: true };
        await new Promise<void>((r) => (this.#wake = r));
      }
    };
    return { next };
  }
}
