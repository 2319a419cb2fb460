import type { BodyWriter } from './http.js';

/**
 * A streamed body that also takes broadcast chunks: a chunk that many streams write alike (its
 * bytes never change, so a front end may keep its wire form per chunk), written at once. Speed
 * only, so it is not part of BodyWriter: the SSE writer discovers it on the writer a front end
 * gives (sharedWriterOf), and a front end without it gets every chunk through `write`.
 */
export interface SharedBodyWriter extends BodyWriter {
  /**
   * Writes `chunk` at once. Only between writes: never while a `write` is under way. True: the
   * socket took it; false: the client is gone; a promise: the bytes are buffered and the socket is
   * backpressured, resolving as `write`'s would.
   */
  writeShared(chunk: Uint8Array): boolean | Promise<boolean>;
}

/** `out` as a SharedBodyWriter, when its front end takes broadcast chunks. */
export function sharedWriterOf(out: BodyWriter): SharedBodyWriter | undefined {
  return typeof (out as Partial<SharedBodyWriter>).writeShared === 'function' ? (out as SharedBodyWriter) : undefined;
}
