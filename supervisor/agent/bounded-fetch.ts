/** The longest line a model server's stream may send (bytes): one SSE event is parsed whole. */
export const MODEL_LINE_LIMIT = 16 * 1024 * 1024;

const NEWLINE = 0x0a;

/** The error a model response body ends with when one of its lines passes the limit. */
export class ModelLineTooLong extends Error {
  constructor(readonly limit: number) {
    super(`the model server sent a stream line longer than ${limit / 1024 / 1024} MiB`);
    this.name = 'ModelLineTooLong';
  }
}

/** The ModelLineTooLong behind an error the client library wrapped, if that is what it was. */
export function lineTooLong(err: unknown): ModelLineTooLong | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof ModelLineTooLong) return e;
  }
  return undefined;
}

/**
 * `fetch` for the model providers whose response bodies may not carry a line longer than
 * `limit` bytes. The client library parses a stream event only once its line has ended, so one
 * runaway delta (hundreds of MB with no newline) would be held, copied and parsed whole; this
 * ends the body with an error that says why as soon as a line passes the limit. The turn's own
 * output limit (run-turn.ts) bounds the total.
 */
export function boundedFetch(limit = MODEL_LINE_LIMIT): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.body) return response;
    let line = 0;
    const tooLong = () => new ModelLineTooLong(limit);
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          let start = 0;
          for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, start)) {
            if (line + at - start > limit) return controller.error(tooLong());
            line = 0;
            start = at + 1;
          }
          line += chunk.byteLength - start;
          if (line > limit) return controller.error(tooLong());
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
