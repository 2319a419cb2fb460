import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** How long establishing a TCP (and TLS) connection may take; the exchange itself is unbounded. */
export const CONNECT_TIMEOUT_MS = 10_000;

export interface UpstreamInit {
  method: string;
  headers: OutgoingHttpHeaders;
  /** A complete body, or a stream of chunks sent with backpressure as the upstream takes them. */
  body?: string | Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  /** Aborting destroys the connection, including a response body still being read. */
  signal: AbortSignal;
}

/** A connection or protocol failure talking to an upstream, before its response head arrived. */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

function describe(err: Error & { code?: string }): UpstreamError {
  const code = err.code ?? err.name;
  return new UpstreamError(err.message && !err.message.includes(code) ? `${code}: ${err.message}` : err.message || code, code);
}

/**
 * One HTTP exchange with an upstream as one awaited value: resolves with the response head (the
 * body is then read from the returned message) or rejects with an UpstreamError, or with the
 * signal's AbortError when the caller went away.
 *
 * node:http rather than fetch: fetch's undici gives up on a response head after 300 s and on a
 * silent body after 300 s, while forwarded `wait_task` calls and quiet SSE streams may
 * legitimately take hours. Only the connect phase is bounded here.
 */
export function openUpstream(url: URL, init: UpstreamInit): Promise<IncomingMessage> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    if (init.signal.aborted) return reject(init.signal.reason);
    const req = send(url, { method: init.method, headers: init.headers, signal: init.signal });
    req.once('response', resolve);
    req.once('error', (err) => reject(init.signal.aborted ? init.signal.reason : describe(err)));
    req.once('socket', (socket) => {
      if (!socket.connecting) return; // a kept-alive socket is already connected
      const timer = setTimeout(() => req.destroy(Object.assign(new Error(`no connection within ${CONNECT_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' })), CONNECT_TIMEOUT_MS);
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    const { body } = init;
    if (body === undefined || typeof body === 'string' || body instanceof Uint8Array) {
      req.end(body);
    } else {
      // A failing request body (the client went away) tears the upstream exchange down with it.
      pipeline(Readable.from(body, { objectMode: false }), req).catch((err: Error) => req.destroy(err));
    }
  });
}

/** Reads a whole response body as text, refusing more than `limit` bytes. */
export async function readText(res: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > limit) {
      res.destroy();
      throw new UpstreamError(`answer larger than ${limit} bytes`, 'E2BIG');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/** A body read whole (`whole`), or one too large for that, streamed from its first bytes on. */
export type BodyRead = { whole: Buffer } | { stream: AsyncIterable<Uint8Array>; first: Buffer };

/**
 * Reads a response body whole while it stays within `limit` bytes; a larger one is handed back as
 * a stream (the bytes already read come first), so it can be passed on without being held.
 * Leaving the stream early destroys the response.
 */
export async function readWholeOrStream(res: IncomingMessage, limit: number): Promise<BodyRead> {
  const iterator = (res as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done) return { whole: Buffer.concat(chunks, size) };
    chunks.push(next.value);
    size += next.value.byteLength;
    if (size > limit) break;
  }
  const first = Buffer.concat(chunks, size);
  async function* rest(): AsyncGenerator<Uint8Array> {
    try {
      yield first;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
    } finally {
      res.destroy();
    }
  }
  return { stream: rest(), first };
}
