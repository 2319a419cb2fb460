import type { StreamEvent } from './types.js';

/**
 * Reads `text/event-stream` frames from a fetch body as they arrive (the browser's EventSource
 * only does GET; the service's event routes are POST). Yields each frame's parsed `data`.
 */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  const reader = body.getReader();
  // One decoder across chunks: a UTF-8 character split between two reads is joined, not mangled.
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = parseBlock(block);
        if (event) yield event;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/** One frame: `data:` lines joined by newlines (SSE rules); comments and other fields ignored. */
function parseBlock(block: string): StreamEvent | null {
  const data = block
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
    .join('\n');
  if (!data) return null;
  const parsed = JSON.parse(data) as StreamEvent;
  return typeof parsed === 'object' && parsed !== null && typeof parsed.kind === 'string' ? parsed : null;
}
