import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

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

/** An upstream's answer: its head, and its body read by iterating. */
export interface UpstreamResponse extends AsyncIterable<Buffer> {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  /** Stops reading the body and gives up the connection. */
  destroy(): void;
}

/** A connection or protocol failure talking to an upstream, before its response head arrived. */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  constructor(
    message: string,
    readonly code: string,
    /** The response head had arrived: the answer broke off, the target was reached. */
    readonly afterHead = false,
  ) {
    super(message);
  }
}

function describe(err: Error & { code?: string }): UpstreamError {
  const code = err.code ?? err.name;
  return new UpstreamError(err.message && !err.message.includes(code) ? `${code}: ${err.message}` : err.message || code, code);
}

interface UndiciClient {
  request: typeof import('undici').request;
  pool: Dispatcher;
}
let client: Promise<UndiciClient> | undefined;

/**
 * One pooled keep-alive client for the proxy's upstreams (forwarding to targets has its own lean
 * client, `keep-alive-pool.ts`). Only the connect phase is bounded: quiet streams may
 * legitimately take hours, so neither the response head nor a silent body times out (fetch gives
 * up on both after 300 s). undici costs ~85 ms of CPU to load, so the first proxied request loads
 * it, not every start.
 */
function undici(): Promise<UndiciClient> {
  return (client ??= import('undici').then(({ Agent, request }) => ({
    request,
    pool: new Agent({ connect: { timeout: CONNECT_TIMEOUT_MS }, headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 4_000 }),
  })));
}

type UndiciBody = NonNullable<Parameters<typeof import('undici').request>[1]>['body'];

/**
 * One HTTP exchange with an upstream as one awaited value: resolves with the response head (the
 * body is then read by iterating the answer) or rejects with an UpstreamError, or with the
 * signal's reason when the caller went away.
 */
export async function openUpstream(url: URL, init: UpstreamInit): Promise<UpstreamResponse> {
  if (init.signal.aborted) throw init.signal.reason;
  try {
    const { request, pool } = await undici();
    const res = await request(url, {
      method: init.method as Dispatcher.HttpMethod,
      headers: init.headers as Record<string, string | string[]>,
      ...(init.body === undefined ? {} : { body: init.body as NonNullable<UndiciBody> }),
      signal: init.signal,
      dispatcher: pool,
    });
    const body = res.body;
    // An abort after the head destroys the body with an error; a reader sees it, and with no
    // reader (the answer already passed on) it must not become an uncaught exception.
    body.on('error', () => undefined);
    return {
      statusCode: res.statusCode,
      headers: res.headers as IncomingHttpHeaders,
      destroy: () => void body.destroy(),
      [Symbol.asyncIterator]: () => (body as AsyncIterable<Buffer>)[Symbol.asyncIterator](),
    };
  } catch (err) {
    if (init.signal.aborted) throw init.signal.reason;
    throw describe(err as Error);
  }
}

/** Reads a whole response body as text, refusing more than `limit` bytes. */
export async function readText(res: UpstreamResponse, limit: number): Promise<string> {
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
