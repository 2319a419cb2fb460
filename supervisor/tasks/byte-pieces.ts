/** Bytes gathered before a piece of an answer is handed on (a few writes per MB). */
const PIECE_BYTES = 1 << 20;
/** The first buffer's size: a small answer does not take a whole piece's memory. */
const FIRST_BYTES = 1 << 16;
/**
 * The encoders behind `Buffer#write` (long-standing Buffer methods that @types/node leaves out):
 * without its argument handling, 100,000 small writes of a large answer take a fifth less time.
 */
type EncodingBuffer = Buffer & {
  latin1Write(text: string, offset: number): number;
  utf8Write(text: string, offset: number): number;
};

const allocate = (size: number) => Buffer.allocUnsafe(size) as EncodingBuffer;
const EMPTY = allocate(0);

/**
 * Gathers many small texts as UTF-8 bytes in pieces of about PIECE_BYTES, each text written
 * straight into the piece's buffer. Joining the texts into strings and converting those to bytes
 * cost three times as much for a 14 MB answer (two copies, and the garbage of the joined strings).
 * A text is never split between pieces, so every piece is whole UTF-8.
 */
export class BytePieces {
  readonly #ready: Buffer[] = [];
  #buf = EMPTY;
  #at = 0;
  /** Size of the next buffer: small answers stay small, large ones soon go in whole pieces. */
  #next = FIRST_BYTES;

  /**
   * Adds `text`. `ascii` (the caller knows it, e.g. from a cached check) copies it byte for byte,
   * without the UTF-8 encoder; a non-ASCII text given as `ascii` would come out wrong.
   */
  add(text: string, ascii = false): void {
    // Fits even at UTF-8's 3 bytes per UTF-16 unit: no need to measure it first.
    if (text.length * (ascii ? 1 : 3) > this.#buf.length - this.#at) {
      const size = ascii ? text.length : Buffer.byteLength(text);
      if (size > this.#buf.length - this.#at) {
        this.#cut();
        if (size > PIECE_BYTES) return void this.#ready.push(Buffer.from(text, ascii ? 'latin1' : 'utf8'));
        this.#buf = allocate(Math.max(this.#next, size));
        this.#next = Math.min(this.#next * 2, PIECE_BYTES);
      }
    }
    this.#at += ascii ? this.#buf.latin1Write(text, this.#at) : this.#buf.utf8Write(text, this.#at);
  }

  /** Whether a piece is complete (take it before adding much more). */
  get hasReady(): boolean {
    return this.#ready.length > 0;
  }

  /** The pieces completed so far; with `end`, the rest too. */
  take(end = false): Buffer[] {
    if (end) this.#cut();
    return this.#ready.splice(0);
  }

  /** Hands on what the current buffer holds (a piece handed on is never written again). */
  #cut(): void {
    if (this.#at > 0) this.#ready.push(this.#buf.subarray(0, this.#at));
    this.#buf = EMPTY;
    this.#at = 0;
  }
}
