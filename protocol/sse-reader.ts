import type { StreamEvent } from '../schemas/events.js';

/** An event stream that cannot be parsed: a frame whose data is not a JSON object with a `kind`. */
export class SseFormatError extends Error {
  override name = 'SseFormatError';
}

/** The JSON of one SSE block (`event:` / `data:` lines), or undefined for comments and keep-alives. */
function parseBlock(block: string): StreamEvent | undefined {
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
  }
  if (!data.length) return undefined;
  let event: unknown;
  try {
    event = JSON.parse(data.join('\n'));
  } catch {
    throw new SseFormatError(`event data is not JSON: ${data.join(' ').slice(0, 200)}`);
  }
  if (typeof event !== 'object' || event === null || typeof (event as { kind?: unknown }).kind !== 'string') {
    throw new SseFormatError('event data is not an object with a kind');
  }
  return event as StreamEvent;
}

/**
 * Parses a `text/event-stream` body into events as their frames complete, so a consumer can pass
 * each one on before the next arrives (nothing waits for the whole stream). Stopping the loop
 * early returns the source iterator, which closes the underlying connection.
 */
export async function* readSseEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<StreamEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    // CRLF framing is legal SSE; a CR left at the end of one chunk pairs with the next chunk's LF.
    buffer = (buffer + decoder.decode(chunk, { stream: true })).replace(/\r\n/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const event = parseBlock(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (event) yield event;
    }
  }
  const last = parseBlock((buffer + decoder.decode()).trim());
  if (last) yield last;
}
