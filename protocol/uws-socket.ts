import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import type { BodyQueue } from './body-queue.js';
import { CORK_PIECE, exceeds } from './uws-chunks.js';

export const NUDGE_MIN_MS = 50;
export const NUDGE_MAX_MS = 2000;

/**
 * The write side of one uWS response, shared by its answer and its body writers: whether it is
 * over, chunks written a cork at a time, and waiting out backpressure.
 */
export class UwsSocket {
  /** Set once the response is complete or the client went away: nothing more is written. */
  aborted = false;
  /** True once the client went away (as opposed to the response being finished). */
  disconnected = false;
  /** Settles the write waiting for the socket, when the client goes away. */
  settleWait: (() => void) | null = null;
  /** The streamed request body, while it may still be arriving. */
  requestBody: BodyQueue | null = null;
  /** How long to wait for onWritable before writing on regardless (grows while nothing drains). */
  #nudgeMs = NUDGE_MIN_MS;

  constructor(readonly res: HttpResponse) {}

  /**
   * Waits after a write that reported backpressure. With this uWS build the onWritable that
   * should follow sometimes never comes (measured: a few times in 8 MB of 16 KB writes), which
   * would stall the stream forever; the next write flushes the buffer, so after a short wait we
   * write on. The wait doubles while no onWritable arrives, bounding what a reader that stopped
   * reading can make us buffer.
   */
  writable(): Promise<void> {
    return new Promise<void>((resolve) => {
      let waiting = true;
      // uWS keeps calling an onWritable handler until another replaces it: only the first call counts.
      const done = () => {
        if (!waiting) return;
        waiting = false;
        clearTimeout(timer);
        this.settleWait = null;
        resolve();
      };
      const timer = setTimeout(() => {
        this.#nudgeMs = Math.min(this.#nudgeMs * 2, NUDGE_MAX_MS);
        done();
      }, this.#nudgeMs);
      this.settleWait = done;
      this.res.onWritable(() => {
        // uWS hands a writable socket to this handler instead of sending what it buffered itself:
        // an empty cork (its uncork writes the buffer first) sends it now, not with our next write.
        this.res.cork(() => {});
        this.#nudgeMs = NUDGE_MIN_MS;
        done();
        return true;
      });
    });
  }

  /**
   * Writes `data` as one chunk, or as several when it is too large for one cork (CORK_PIECE),
   * `after` (a lead) right behind the last; false when the socket buffered some of it.
   */
  writeChunk(data: string | Uint8Array, after?: string): boolean {
    let ok = true;
    let last = data;
    if (exceeds(data, CORK_PIECE)) {
      const bytes = typeof data === 'string' ? Buffer.from(data) : data;
      let at = 0;
      for (; bytes.byteLength - at > CORK_PIECE; at += CORK_PIECE) {
        const piece = bytes.subarray(at, at + CORK_PIECE);
        this.res.cork(() => (ok = this.res.write(piece) && ok));
      }
      last = bytes.subarray(at);
    }
    this.res.cork(() => {
      ok = this.res.write(last) && ok;
      if (after !== undefined) ok = this.res.write(after) && ok;
    });
    return ok;
  }

  /** Drops the connection: the client sees a broken response, not a complete but short one. */
  drop(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.res.close();
  }
}
