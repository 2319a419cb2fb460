/**
 * Turns push-style body chunks (uWS `onData`) into a pull-style async iterable, pausing the
 * producer when too much is buffered so a slow consumer never makes memory grow with the body.
 */
export class BodyQueue implements AsyncIterable<Uint8Array> {
  readonly #chunks: Uint8Array[] = [];
  #buffered = 0;
  #done = false;
  #error: Error | null = null;
  #wake: (() => void) | null = null;
  #paused = false;

  constructor(
    private readonly pause: () => void,
    private readonly resume: () => void,
    // 4 MiB: with 1 MiB, uWS was paused after two of its 512 KiB chunks and uploads ran ~35 % slower.
    private readonly highWater = 4 * 1024 * 1024,
  ) {}

  push(chunk: Uint8Array, last: boolean): void {
    if (chunk.byteLength) {
      this.#chunks.push(chunk);
      this.#buffered += chunk.byteLength;
    }
    if (last) this.#done = true;
    if (!this.#done && !this.#paused && this.#buffered >= this.highWater) {
      this.#paused = true;
      this.pause();
    }
    this.#notify();
  }

  fail(error: Error): void {
    this.#error = error;
    this.#notify();
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
