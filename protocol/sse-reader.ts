import type { StreamEvent } from '../schemas/events.js';

/** An event stream that cannot be parsed: a frame whose data is not a JSON object with a `kind`. */
export class SseFormatError extends Error {
  override name = 'SseFormatError';
}

/** Most characters one event (its `data:` lines together) may have before the stream is refused. */
export const MAX_EVENT_CHARS = 32 * 1024 * 1024;

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

/**
 * Collects the lines of one event. Each character of the stream is looked at once: pieces of a
 * line are kept in a list and joined when the line ends, so an endless line costs linear time,
 * and it is refused once it passes `limit`.
 */
class EventAssembler {
  #line: string[] = [];
  #lineChars = 0;
  #data: string[] = [];
  #dataChars = 0;

  constructor(private readonly limit: number) {}

  /** Adds part of the current line. */
  piece(text: string): void {
    if (text === '') return;
    this.#line.push(text);
    this.#lineChars += text.length;
    if (this.#lineChars + this.#dataChars > this.limit) throw new SseFormatError(`the target sent an oversized event (more than ${this.limit} characters)`);
  }

  /** Ends the current line; returns the event when the line was the blank one that ends it. */
  endLine(): StreamEvent | undefined {
    const line = this.#line.length === 1 ? this.#line[0]! : this.#line.join('');
    this.#line = [];
    this.#lineChars = 0;
    if (line === '') return this.flush();
    if (line.startsWith('data:')) {
      const value = line.slice(line.startsWith('data: ') ? 6 : 5);
      this.#data.push(value);
      this.#dataChars += value.length;
    }
    return undefined;
  }

  /** The pending event, if any (comments and keep-alives have no data). */
  flush(): StreamEvent | undefined {
    if (this.#lineChars > 0) this.endLine();
    if (this.#data.length === 0) return undefined;
    const data = this.#data.join('\n');
    this.#data = [];
    this.#dataChars = 0;
    return parseData(data);
  }
}

/**
 * Parses a `text/event-stream` body into events as their frames complete, so a consumer can pass
 * each one on before the next arrives (nothing waits for the whole stream). Lines may end with
 * LF, CRLF or CR (a CR at the end of one chunk pairs with the next chunk's LF). An event larger
 * than `limit` characters ends the stream with an SseFormatError. Stopping the loop early returns
 * the source iterator, which closes the underlying connection.
 */
export async function* readSseEvents(body: AsyncIterable<Uint8Array>, limit = MAX_EVENT_CHARS): AsyncGenerator<StreamEvent> {
  const decoder = new TextDecoder();
  const event = new EventAssembler(limit);
  const terminator = /[\r\n]/g;
  let pendingCr = false;
  for await (const chunk of body) {
    const text = decoder.decode(chunk, { stream: true });
    let start = pendingCr && text.startsWith('\n') ? 1 : 0;
    pendingCr = false;
    terminator.lastIndex = start;
    for (let match = terminator.exec(text); match; match = terminator.exec(text)) {
      event.piece(text.slice(start, match.index));
      const done = event.endLine();
      start = match.index + 1;
      if (match[0] === '\r') {
        if (start === text.length) pendingCr = true;
        else if (text[start] === '\n') start++;
      }
      terminator.lastIndex = start;
      if (done) yield done;
    }
    event.piece(text.slice(start));
  }
  event.piece(decoder.decode());
  const last = event.flush();
  if (last) yield last;
}
