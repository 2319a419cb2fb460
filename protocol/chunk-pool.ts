/**
 * Reusable memory for request body chunks. uWS lends each chunk only for the duration of its
 * callback, so every chunk of a streamed body is copied; allocating a fresh buffer per chunk made
 * a 256 MiB upload allocate 256 MiB of external memory, and V8 answers that with repeated full
 * garbage collections of the whole heap (measured: uploads up to 1.7x slower). Chunks copied into
 * pooled slabs and handed back by the consumer (LentChunks) are used again instead.
 */

/**
 * A request whose body chunks are lent from a ChunkPool (the uWS front end's): a consumer that no
 * longer reads a chunk from `body()` hands it back, so its memory holds a later chunk. Memory and
 * speed only, so it is not part of IncomingRequest: consumers of large bodies look for it on the
 * request they are given, and a chunk never handed back is simply garbage collected.
 */
export interface LentChunks {
  recycle?(chunk: Uint8Array): void;
}

/** uWS never delivers more than its 512 KiB receive buffer at once. */
const SLAB_BYTES = 512 * 1024;
/** Slabs kept for reuse: enough for the chunks one upload has in flight; beyond, plain allocation. */
const MAX_FREE_SLABS = 48;

export class ChunkPool {
  readonly #free: ArrayBuffer[] = [];
  /** Slabs of this pool that are out: only those may come back (a foreign buffer never enters). */
  readonly #lent = new WeakSet<ArrayBuffer>();

  /** A private copy of `source`. */
  copy(source: ArrayBuffer): Uint8Array {
    const size = source.byteLength;
    if (size > SLAB_BYTES || size < 4096) return Buffer.from(new Uint8Array(source));
    const slab = this.#free.pop() ?? new ArrayBuffer(SLAB_BYTES);
    this.#lent.add(slab);
    const chunk = Buffer.from(slab, 0, size);
    chunk.set(new Uint8Array(source));
    return chunk;
  }

  /** Takes a chunk back once nothing reads it any more; anything not from this pool is ignored. */
  recycle(chunk: Uint8Array): void {
    const slab = chunk.buffer;
    if (!(slab instanceof ArrayBuffer) || !this.#lent.has(slab)) return;
    this.#lent.delete(slab);
    if (this.#free.length < MAX_FREE_SLABS) this.#free.push(slab);
  }
}
