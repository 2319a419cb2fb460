import type { SharedWrite } from '../core/shared-events.js';
import type { StreamEvent } from '../schemas/events.js';
import { responseJson } from '../schemas/job-response.js';
import type { BodyWriter, ResponseSink } from './http.js';
import { writeAll } from './reply.js';
import { sharedWriterOf, type SharedBodyWriter } from './shared-body-writer.js';

export const SSE_HEADERS = Object.freeze({
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
});

/** An SSE frame's data line: single-line JSON (JSON.stringify never emits raw newlines). */
const dataOf = (event: StreamEvent): string => (event.kind === 'result' ? responseJson(event, '{"kind":"result",') : JSON.stringify(event));

/** One SSE frame: `event: <kind>`, `data: <single-line JSON>`, blank line. */
export function frame(event: StreamEvent): string {
  return `event: ${event.kind}\ndata: ${dataOf(event)}\n\n`;
}

/** What every frame starts with: sent ahead by front ends that would otherwise hold a frame back (StreamOptions). */
const LEAD = 'event: ';

/** Frame bytes by event object: followers of a Task share its event objects, and so one serialization. */
const framed = new WeakMap<StreamEvent, Buffer>();

/** The frame of `event` as bytes, serialized once per event object. */
export function frameBytes(event: StreamEvent): Buffer {
  let bytes = framed.get(event);
  if (!bytes) {
    // Written in place: the frame as one string, made bytes, copied a log window once more (and
    // left that copy as garbage), for every frame of every follower of a big log.
    const head = `event: ${event.kind}\ndata: `;
    const data = dataOf(event);
    const out = Buffer.allocUnsafe(head.length + Buffer.byteLength(data) + 2);
    const at = out.write(head, 0, 'latin1');
    out.fill(0x0a, at + out.write(data, at, 'utf8'));
    framed.set(event, (bytes = out));
  }
  return bytes;
}

/** The last batch made into bytes: a broadcast hands the same array to every follower in a row. */
let lastBatch: { events: readonly StreamEvent[]; bytes: Buffer } | null = null;

/** The frames of `events` as one buffer, made once per (unchanging) array while it is being broadcast. */
export function batchBytes(events: readonly StreamEvent[]): Buffer {
  if (lastBatch?.events !== events) {
    lastBatch = { events, bytes: events.length === 1 ? frameBytes(events[0]!) : Buffer.concat(events.map(frameBytes)) };
  }
  return lastBatch.bytes;
}

/**
 * Writes events in order with backpressure. Frames sent in one go (without awaiting between them)
 * leave in one write; `send` resolves when its write is accepted by the socket, so producers that
 * await it never buffer more than one batch ahead of a slow client.
 */
export class SseWriter {
  readonly #out: BodyWriter;
  /** The same writer, when its front end takes broadcast chunks (sendShared). */
  readonly #shared: SharedBodyWriter | undefined;
  /** Frames waiting for the next write. */
  #batch: Buffer[] = [];
  /** The next write, once a frame waits for it. */
  #next: Promise<boolean> | null = null;
  /** The write in flight (resolved once the socket took it). */
  #writing: Promise<boolean> = Promise.resolve(true);
  /** A write is under way (not yet taken by the socket). */
  #busy = false;
  #closed = false;

  constructor(res: ResponseSink) {
    this.#out = res.stream(200, { ...SSE_HEADERS }, { lead: LEAD });
    this.#shared = sharedWriterOf(this.#out);
  }

  get closed(): boolean {
    return this.#closed;
  }

  send(event: StreamEvent): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    this.#batch.push(frameBytes(event));
    // Queued behind the write in flight, and at least a microtask away: frames sent together join the batch.
    return (this.#next ??= this.#writing.then((open) => this.#flush(open)));
  }

  /**
   * Writes a broadcast batch at once when nothing else is queued or under way (see SharedWrite):
   * no promise, and the batch's bytes are shared by every follower it is written to.
   */
  sendShared(events: readonly StreamEvent[]): SharedWrite {
    if (this.#closed || this.#busy || this.#next || !this.#shared) return 'refused';
    const taken = this.#shared.writeShared(batchBytes(events));
    if (typeof taken === 'boolean') return taken ? 'sent' : 'refused';
    this.#track(taken);
    return 'full';
  }

  /**
   * Sends a terminal `result` whose data line arrives as chunks of single-line JSON (a streamed
   * answer), after every frame already sent, then closes.
   */
  async finishStreamed(data: AsyncIterable<string | Uint8Array>): Promise<void> {
    if (this.#closed) return;
    const open = await (this.#next ?? this.#writing);
    this.#closed = true;
    const out = this.#out;
    if (!open) return out.abort();
    // One frame in pieces: every piece continues the one before, and the end closes the frame.
    async function* framed(): AsyncGenerator<string | Uint8Array> {
      yield 'event: result\ndata: ';
      yield* data;
    }
    if (await writeAll(out, framed(), false, true)) out.end('\n\n');
  }

  /** Sends the terminal `result` and closes; later events are dropped (spec, Events 1). */
  async finish(result: StreamEvent): Promise<void> {
    if (this.#closed) return;
    const sent = this.send(result);
    this.#closed = true;
    await sent;
  }

  /** Writes the batch; once closed, the batch (ending with the result) ends the stream. */
  #flush(open: boolean): Promise<boolean> {
    const batch = this.#batch;
    this.#batch = [];
    this.#next = null;
    const bytes = batch.length === 1 ? batch[0]! : Buffer.concat(batch);
    if (this.#closed) {
      this.#out.end(open ? bytes : undefined);
      return Promise.resolve(false);
    }
    return open ? this.#track(this.#out.write(bytes)) : Promise.resolve(false);
  }

  /** Makes `write` the write under way until the socket took it. */
  #track(write: Promise<boolean>): Promise<boolean> {
    this.#busy = true;
    const tracked: Promise<boolean> = write.then((open) => {
      if (this.#writing === tracked) this.#busy = false;
      return open;
    });
    return (this.#writing = tracked);
  }
}
