import type { BodyWriter, Handler, IncomingRequest, ResponseHeaders, ResponseSink } from './http.js';
import { hookOf } from './abort-hook.js';

/** A request handed to the routes without a socket. */
export interface InProcessInit {
  method?: string;
  /** Path with an optional query, e.g. `/jobs/version` or `/files?path=tmp/x`. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Aborting it is the client going away. */
  signal?: AbortSignal;
}

/** A complete answer of the routes. */
export interface InProcessResponse {
  readonly status: number;
  readonly headers: ResponseHeaders;
  readonly body: Buffer;
  text(): string;
  json(): unknown;
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

/**
 * Runs one request through a handler in this process, the way hono's `app.request()` does: the
 * same front door, auth and routes as over HTTP, without a socket or a front end. Resolves once
 * the response is complete (a streamed one when it ends); a dropped stream rejects.
 */
export function requestInProcess(handler: Handler, init: InProcessInit): Promise<InProcessResponse> {
  const q = init.path.indexOf('?');
  const body = init.body === undefined ? [] : [typeof init.body === 'string' ? Buffer.from(init.body) : init.body];
  const headers = lowerCased(init.headers ?? {});
  if (init.body !== undefined && headers['content-length'] === undefined) headers['content-length'] = String(body[0]!.byteLength);
  const signal = init.signal ?? new AbortController().signal;
  const req: IncomingRequest = {
    method: (init.method ?? 'GET').toUpperCase(),
    path: q === -1 ? init.path : init.path.slice(0, q),
    query: q === -1 ? '' : init.path.slice(q + 1),
    headers,
    signal,
    gone: hookOf(signal),
    body: () => body,
  };
  return new Promise((resolve, reject) => {
    const finish = (status: number, out: ResponseHeaders, chunks: Uint8Array[]) => {
      const bytes = Buffer.concat(chunks);
      resolve({ status, headers: out, body: bytes, text: () => bytes.toString('utf8'), json: () => JSON.parse(bytes.toString('utf8')) as unknown });
    };
    let done = false;
    const res: ResponseSink = {
      send(status, out, data = '') {
        if (done) return;
        done = true;
        finish(status, out, [typeof data === 'string' ? Buffer.from(data) : data]);
      },
      stream(status, out): BodyWriter {
        const chunks: Uint8Array[] = [];
        return {
          write: async (chunk) => {
            if (done) return false;
            chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk));
            return true;
          },
          end: (last) => {
            if (done) return;
            done = true;
            if (last !== undefined) chunks.push(typeof last === 'string' ? Buffer.from(last) : Buffer.from(last));
            finish(status, out, chunks);
          },
          abort: () => {
            if (done) return;
            done = true;
            reject(new Error('the response was broken off'));
          },
        };
      },
    };
    handler(req, res).then(
      () => {
        if (!done) reject(new Error('the handler ended without a response'));
      },
      (err: unknown) => reject(err instanceof Error ? err : new Error(String(err))),
    );
  });
}
