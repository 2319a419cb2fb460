/** One parsed server-sent event: its `data` JSON (every taskyard event carries `kind`). */
export type SseData = Record<string, unknown> & { kind?: unknown };

/**
 * Parses an SSE byte stream frame by frame as it arrives (never buffering the whole stream):
 * frames end with a blank line; `data:` lines of a frame are joined; comments are skipped.
 */
export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseData> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data) yield JSON.parse(data) as SseData;
    }
  }
}
