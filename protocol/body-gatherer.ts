import { HttpError } from '../core/errors.js';
import type { LentChunks } from './chunk-pool.js';
import type { IncomingRequest } from './http.js';

/** Buffers made here whole, and given to nobody else: they may move to another thread. */
const ownBuffers = new WeakSet<Uint8Array>();

/** Whether `bytes` is a whole body gathered here (its memory nobody else holds, so it may move). */
export const mayMove = (bytes: Uint8Array): boolean => ownBuffers.has(bytes);

/** From this many bytes received on, a body with a declared length goes into one buffer of that length. */
const WHOLE_FROM_BYTES = 1024 * 1024;

/**
 * Gathers a body's chunks into one buffer. A large body with a Content-Length is copied, chunk by
 * chunk as it arrives, into one buffer of that length, and each chunk goes back to the front end
 * at once (its memory is reused for the next): joining the chunks at the end copied 16 MiB into
 * fresh memory in one go, on the event loop. That buffer is only made once a client has sent
 * WHOLE_FROM_BYTES, so a length declared but not sent reserves nothing. Nobody else holds that
 * buffer, so it can move to another thread without a copy (`mayMove`).
 */
export class BodyGatherer {
  readonly #declared: number | undefined;
  #chunks: Buffer[] = [];
  #whole: Buffer | null = null;
  size = 0;

  constructor(declared: number | undefined) {
    this.#declared = declared;
  }

  /** Takes `chunk` (read from `req.body()`), which may be handed back to `req` for reuse. */
  add(chunk: Uint8Array, req: IncomingRequest & LentChunks): void {
    if (!this.#whole && this.#declared !== undefined && this.size + chunk.byteLength >= WHOLE_FROM_BYTES) {
      const whole = (this.#whole = Buffer.allocUnsafeSlow(this.#declared));
      let at = 0;
      for (const kept of this.#chunks) {
        at += kept.copy(whole, at);
        req.recycle?.(kept);
      }
      this.#chunks = [];
    }
    if (this.#whole) {
      // HTTP framing ends a body at its Content-Length: more would be a front end's fault.
      if (this.size + chunk.byteLength > this.#whole.byteLength) throw new HttpError(400, 'Request body longer than its Content-Length');
      this.#whole.set(chunk, this.size);
      req.recycle?.(chunk);
    } else {
      this.#chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    }
    this.size += chunk.byteLength;
  }

  /** The whole body (shorter than declared when the client sent less: the front end ended it). */
  bytes(): Buffer {
    if (this.#whole && this.size === this.#whole.byteLength) {
      ownBuffers.add(this.#whole);
      return this.#whole;
    }
    if (this.#whole) return this.#whole.subarray(0, this.size);
    return this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.size);
  }
}
