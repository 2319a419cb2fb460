import type { StreamEvent } from '../schemas/events.js';
import { responseJson } from '../schemas/job-response.js';
import type { BodyWriter, ResponseSink } from './http.js';
import { writeAll } from './reply.js';

export const SSE_HEADERS = Object.freeze({
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
});

/** One SSE frame: `event: <kind>`, `data: <single-line JSON>`, blank line. */
export function frame(event: StreamEvent): string {
  // JSON.stringify never emits raw newlines, so the data line stays single.
  const data = event.kind === 'result' ? responseJson(event, '{"kind":"result",') : JSON.stringify(event);
  return `event: ${event.kind}\ndata: ${data}\n\n`;
}

/**
 * Writes events in order with backpressure: `send` resolves when the frame is accepted by the
 * socket, so producers that await it never buffer more than one frame ahead of a slow client.
 */
export class SseWriter {
  readonly #out: BodyWriter;
  #tail: Promise<boolean> = Promise.resolve(true);
  #closed = false;

  constructor(res: ResponseSink) {
    this.#out = res.stream(200, { ...SSE_HEADERS });
  }

  get closed(): boolean {
    return this.#closed;
  }

  send(event: StreamEvent): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    const text = frame(event);
    this.#tail = this.#tail.then((open) => (open ? this.#out.write(text) : false));
    return this.#tail;
  }

  /**
   * Sends a terminal `result` whose data line arrives as chunks of single-line JSON (a streamed
   * answer), after every frame already sent, then closes.
   */
  async finishStreamed(data: AsyncIterable<string>): Promise<void> {
    const open = await this.#tail;
    this.#closed = true;
    if (!open) return this.#out.end();
    const out = this.#out;
    async function* framed(): AsyncGenerator<string> {
      yield 'event: result\ndata: ';
      yield* data;
      yield '\n\n';
    }
    if (await writeAll(out, framed())) out.end();
  }

  /** Sends the terminal `result` and closes; later events are dropped (spec, Events 1). */
  async finish(result: StreamEvent): Promise<void> {
    await this.send(result);
    this.#closed = true;
    this.#out.end();
  }
}
