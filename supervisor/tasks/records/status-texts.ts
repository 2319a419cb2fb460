import { setImmediate as nextTurn } from 'node:timers/promises';
import type { TaskRecord } from './task-record.js';
import { inFile, type IndexSource } from './stored-record.js';

/** Status texts for listings and the index file: runs of an index file read at once. */

/** Largest run of a listing read from the file at once. */
const MAX_SPAN = 1 << 20;
/**
 * Bytes of a listing chunk: small enough that building and writing one keeps other requests
 * waiting well under a millisecond, and that its string is young (V8 puts strings over ~128 KB
 * straight into the old generation, which only a full collection of the whole history frees).
 */
const CHUNK_BYTES = 48 << 10;

/**
 * The status texts of `records` (null without a status): those in one index file close together
 * are read with one read; `other` answers the rest.
 */
export function statusTexts(records: readonly TaskRecord[], other: (record: TaskRecord) => string | null): Array<string | null> {
  let source: IndexSource | null = null;
  let lo = Infinity;
  let hi = 0;
  for (const r of records) {
    if (!inFile(r)) continue;
    source ??= r.source;
    if (r.source !== source) continue;
    lo = Math.min(lo, r.offset);
    hi = Math.max(hi, r.offset + r.text);
  }
  const span = source && hi - lo <= MAX_SPAN ? source.read(lo, hi - lo) : undefined;
  return records.map((r) => (span && inFile(r) && r.source === source ? span.toString('utf8', r.offset - lo, r.offset - lo + r.text) : other(r)));
}

/** Reused by statusChunk (synchronous, so one at a time): a chunk's bytes, and one run of an index file. */
let chunkBytes = Buffer.allocUnsafe(CHUNK_BYTES * 2);
let spanBytes = Buffer.allocUnsafe(0);

/**
 * The status texts of `records` from `from` on, each after a comma but the list's first, as one
 * string of about `CHUNK_BYTES` (at least one record), and the index of the next record. Bytes are copied from
 * the index file (one read for a run of it) and from in-memory texts into one reused buffer, so a
 * chunk is one young string: no string per record, nothing big enough for the old generation.
 */
export function statusChunk(records: readonly TaskRecord[], from: number, other: (record: TaskRecord) => string | null): { json: string; next: number } {
  let end = from;
  let size = 0;
  let source: IndexSource | null = null;
  let lo = Infinity;
  let hi = 0;
  for (; end < records.length && (end === from || size < CHUNK_BYTES); end++) {
    const r = records[end]!;
    if (!inFile(r)) continue;
    size += r.text + 1;
    source ??= r.source;
    if (r.source !== source) continue;
    lo = Math.min(lo, r.offset);
    hi = Math.max(hi, r.offset + r.text);
  }
  const span = source !== null && hi - lo <= MAX_SPAN;
  if (span) {
    if (spanBytes.length < hi - lo) spanBytes = Buffer.allocUnsafe(Math.max(hi - lo, 2 * spanBytes.length));
    source!.readInto(spanBytes, 0, lo, hi - lo);
  }
  let at = 0;
  for (let i = from; i < end; i++) {
    const r = records[i]!;
    const text = inFile(r) ? null : other(r);
    const length = text === null ? (inFile(r) ? r.text : 4) : Buffer.byteLength(text);
    if (chunkBytes.length < at + length + 1) {
      const grown = Buffer.allocUnsafe(Math.max(2 * chunkBytes.length, at + length + 1));
      chunkBytes.copy(grown, 0, 0, at);
      chunkBytes = grown;
    }
    if (i > 0) chunkBytes[at++] = 0x2c;
    if (inFile(r) && span && r.source === source) spanBytes.copy(chunkBytes, at, r.offset - lo, r.offset - lo + r.text);
    else if (inFile(r)) r.source!.readInto(chunkBytes, at, r.offset, r.text);
    else chunkBytes.write(text ?? 'null', at, 'utf8');
    at += length;
  }
  return { json: chunkBytes.toString('utf8', 0, at), next: end };
}


/** The JSON array of the records' statuses as chunks (statusChunk), the event loop free between them. */
export async function* listingChunks(records: readonly TaskRecord[], other: (record: TaskRecord) => string | null): AsyncGenerator<string> {
  yield '[';
  for (let i = 0; i < records.length; ) {
    if (i > 0) await nextTurn();
    const { json, next } = statusChunk(records, i, other);
    yield json;
    i = next;
  }
  yield ']';
}
