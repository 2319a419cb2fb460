import type { StreamEvent } from '../schemas/events.js';
import { mayWork, nextTurn } from './turn-share.js';

/** An event stream that cannot be parsed: a frame whose data is not a JSON object with a `kind`. */
export class SseFormatError extends Error {
  override name = 'SseFormatError';
}

/**
 * Most bytes one event may take on the wire (its `data:` lines, prefixes and line ends included)
 * before the stream is refused. Counting what was received, not the characters kept, bounds the
 * memory of a stream of empty `data:` lines too.
 */
export const MAX_EVENT_BYTES = 32 * 1024 * 1024;

const LF = 10;
const CR = 13;
const SPACE = 32;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const EMPTY = Buffer.alloc(0);
/** A buffer grown past this for one large event is let go after it, not kept for the stream's life. */
const KEEP_BYTES = 64 * 1024;

function parseData(data: string): StreamEvent {
  let event: unknown;
  try {
    event = JSON.parse(data);
  } catch {
    throw new SseFormatError(`event data is not JSON: ${data.slice(0, 200)}`);
  }
  if (typeof event !== 'object' || event === null || typeof (event as { kind?: unknown }).kind !== 'string') {
    throw new SseFormatError('event data is not an object with a kind');
  }
  return event as StreamEvent;
}

/** Pieces up to this long are copied byte by byte: a native copy costs more than the loop. */
const SMALL_COPY = 32;

/** Bytes appended at the end, in one buffer that doubles as it fills. */
class ByteRun {
  bytes = Buffer.allocUnsafe(0);
  length = 0;

  append(from: Buffer, start: number, end: number): void {
    const needed = this.length + end - start;
    if (needed > this.bytes.length) this.#grow(needed);
    if (end - start > SMALL_COPY) this.length += from.copy(this.bytes, this.length, start, end);
    else for (let i = start; i < end; i++) this.bytes[this.length++] = from[i]!;
  }

  /** Appends `count` copies of one byte. */
  repeat(byte: number, count: number): void {
    const needed = this.length + count;
    if (needed > this.bytes.length) this.#grow(needed);
    this.bytes.fill(byte, this.length, needed);
    this.length = needed;
  }

  clear(): void {
    this.length = 0;
    if (this.bytes.length > KEEP_BYTES) this.bytes = Buffer.allocUnsafe(0);
  }

  #grow(needed: number): void {
    const grown = Buffer.allocUnsafe(Math.max(needed, 2 * this.bytes.length, 256));
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
  }
}

/** Whether `bytes[start, end)` starts with `data:`. */
const isData = (bytes: Buffer, start: number, end: number): boolean =>
  end - start >= 5 && bytes[start] === 0x64 && bytes[start + 1] === 0x61 && bytes[start + 2] === 0x74 && bytes[start + 3] === 0x61 && bytes[start + 4] === 0x3a;

/**
 * Collects the lines of one event as bytes. The `data:` values are copied into one buffer (joined
 * by LF, as the SSE format says) and decoded once the event ends; other lines are dropped once
 * read. The bytes of the event's `data:` lines as received, and of a line still unfinished, count
 * against `limit`. The LFs that join values are owed, as a count, until a value follows (or the
 * event ends): a run of empty `data:` lines costs a counter, not a buffer that grows with it.
 */
class EventAssembler {
  /** The current line's bytes from earlier chunks (most lines lie within one chunk and skip this). */
  readonly #partial = new ByteRun();
  readonly #data = new ByteRun();
  #dataLines = 0;
  /** LFs between the values so far not yet written into #data. */
  #owedLf = 0;
  #received = 0;

  constructor(private readonly limit: number) {}

  /** Adds the start of a line that continues in the next chunk. */
  piece(chunk: Buffer, start: number, end: number): void {
    if (start === end) return;
    this.#partial.append(chunk, start, end);
    this.#check(this.#partial.length);
  }

  /** Ends the line whose last part is `chunk[start, end)`; returns the event when it was the blank line ending one. */
  line(chunk: Buffer, start: number, end: number): StreamEvent | undefined {
    let bytes = chunk;
    if (this.#partial.length > 0) {
      this.piece(chunk, start, end);
      bytes = this.#partial.bytes;
      start = 0;
      end = this.#partial.length;
    } else if (start === end) return this.flush();
    if (isData(bytes, start, end)) {
      this.#received += end - start + 1;
      this.#check(0);
      let value = start + 5;
      if (value < end && bytes[value] === SPACE) value++;
      if (this.#dataLines++ > 0) this.#owedLf++;
      if (value < end) {
        this.#payLf();
        this.#data.append(bytes, value, end);
      }
    }
    if (this.#partial.length > 0) this.#partial.clear();
    return undefined;
  }

  /** The pending event, if any (comments and keep-alives have no data). */
  flush(): StreamEvent | undefined {
    if (this.#partial.length > 0) this.line(EMPTY, 0, 0);
    this.#received = 0;
    if (this.#dataLines === 0) return undefined;
    this.#payLf();
    const data = this.#data.bytes.toString('utf8', 0, this.#data.length);
    this.#dataLines = 0;
    this.#data.clear();
    return parseData(data);
  }

  #payLf(): void {
    if (this.#owedLf === 0) return;
    this.#data.repeat(LF, this.#owedLf);
    this.#owedLf = 0;
  }

  #check(unfinished: number): void {
    if (this.#received + unfinished > this.limit) throw new SseFormatError(`the target sent an oversized event (more than ${this.limit} bytes)`);
  }
}

/** Lines shorter than this are scanned here; past it, a native search is cheaper than the loop. */
const SHORT_LINE = 64;

/** The index of the next LF in `chunk` from `from`, or -1. */
function nextLf(chunk: Buffer, from: number): number {
  const stop = Math.min(chunk.length, from + SHORT_LINE);
  for (let i = from; i < stop; i++) if (chunk[i] === LF) return i;
  return stop === chunk.length ? -1 : chunk.indexOf(LF, stop);
}

/** The chunk as a Buffer (a view, not a copy), for indexOf. */
const asBuffer = (chunk: Uint8Array): Buffer => (Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));

/**
 * Parses a `text/event-stream` body into events as their frames complete, so a consumer can pass
 * each one on before the next arrives (nothing waits for the whole stream). Works on bytes: lines
 * may end with LF, CRLF or CR (a CR at the end of one chunk pairs with the next chunk's LF), and
 * an event's data is decoded as UTF-8 once it is complete. An event over `limit` bytes ends the
 * stream with an SseFormatError. Stopping the loop early returns the source iterator, which
 * closes the underlying connection.
 */
export async function* readSseEvents(body: AsyncIterable<Uint8Array>, limit = MAX_EVENT_BYTES): AsyncGenerator<StreamEvent> {
  const event = new EventAssembler(limit);
  let pendingCr = false;
  let first = true;
  for await (const piece of body) {
    // Chunks queued while this stream waited are otherwise read in one go: every forwarded
    // stream shares one short slice of each turn (a fast stream, or a hostile one, must not hold
    // the event loop, nor five of them together).
    while (!mayWork()) await nextTurn();
    const chunk = asBuffer(piece);
    let start = pendingCr && chunk[0] === LF ? 1 : 0;
    pendingCr = false;
    if (first && chunk.length > 0) {
      first = false;
      if (chunk.length >= BOM.length && BOM.equals(chunk.subarray(0, BOM.length))) start = BOM.length; // as a UTF-8 decoder would drop it
    }
    // The next CR at or after `start` (-1: none in this chunk): rare, so usually looked for once.
    let cr = chunk.indexOf(CR, start);
    for (;;) {
      let end = nextLf(chunk, start);
      if (cr !== -1 && (end === -1 || cr < end)) end = cr;
      if (end === -1) break;
      const done = event.line(chunk, start, end);
      start = end + 1;
      if (end === cr) {
        if (start === chunk.length) pendingCr = true;
        else if (chunk[start] === LF) start++;
        cr = chunk.indexOf(CR, start);
      }
      if (done) yield done;
    }
    event.piece(chunk, start, chunk.length);
  }
  const last = event.flush();
  if (last) yield last;
}
