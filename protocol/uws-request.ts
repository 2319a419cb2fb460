import type { HttpRequest, HttpResponse } from '@trufflesuite/uws-js-unofficial';
import type { AbortHook } from './abort-hook.js';
import { BodyQueue } from './body-queue.js';
import type { ChunkPool, LentChunks } from './chunk-pool.js';
import type { Handler, HeaderMap, IncomingRequest } from './http.js';
import { ambiguousFraming } from './request-framing.js';
import { EMPTY_CHUNK } from './uws-chunks.js';
import { CLIENT_GONE, UwsResponse } from './uws-response.js';

const EMPTY_BODY: readonly Uint8Array[] = [];
/** The answer to a request whose body framing is ambiguous: the connection ends with it. */
const FRAMING_HEADERS = Object.freeze({ 'content-type': 'application/json', connection: 'close' });

/** Bodies up to this size are gathered before the handler runs; larger ones stream. */
const SMALL_BODY = 64 * 1024;

function isSmall(headers: HeaderMap): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] === undefined && length !== undefined && /^\d+$/.test(length) && Number(length) <= SMALL_BODY;
}

function hasBody(headers: HeaderMap): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

type Body = () => AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

/**
 * A request as read in uWS's callback (a class: its getter then costs nothing per request). Its
 * streamed body chunks come from the front end's pool and may be handed back (LentChunks).
 */
class UwsRequest implements IncomingRequest, LentChunks {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly query: string,
    readonly headers: HeaderMap,
    private readonly sink: UwsResponse,
    readonly body: Body,
    private readonly chunks: ChunkPool,
  ) {}

  get signal(): AbortSignal {
    return this.sink.signal;
  }

  get gone(): AbortHook {
    return this.sink.gone;
  }

  recycle(chunk: Uint8Array): void {
    this.chunks.recycle(chunk);
  }
}

/**
 * Serves one request in uWS's callback: reads all it needs from `req` (invalid once the callback
 * returns), gathers a small body or queues a large one, and runs `handler`.
 */
export function serveUws(res: HttpResponse, req: HttpRequest, handler: Handler, chunks: ChunkPool): void {
  const headers: HeaderMap = {};
  req.forEach((name, value) => {
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  });
  const method = req.getMethod().toUpperCase();
  const path = req.getUrl();
  const query = req.getQuery() ?? '';
  const sink = new UwsResponse(res, method === 'HEAD');
  let abortBody: ((err: Error) => void) | null = null;
  res.onAborted(() => {
    sink.onAborted();
    abortBody?.(CLIENT_GONE);
  });
  const run = (body: Body) => {
    handler(new UwsRequest(method, path, query, headers, sink, body, chunks), sink).catch((err: unknown) => {
      console.error('taskyard: unhandled error in request handler', err);
      sink.send(500, { 'content-type': 'application/json' }, JSON.stringify({ detail: 'Internal server error' }));
    });
  };
  // uWS reuses a chunk's memory after onData returns: every chunk is copied (Buffer.from
  // copies small ones into Node's shared pool rather than allocating a backing store each).
  const copy = (chunk: ArrayBuffer) => Buffer.from(new Uint8Array(chunk));
  // uWS frames the body by the first Content-Length alone and reads what follows it as the
  // next request. An answer ended here, inside uWS's parse, lets it go on to that request;
  // one ended on the next turn closes the connection after it, and a request arriving while
  // it is pending makes uWS drop the connection itself (no answer, nothing smuggled).
  const framing = ambiguousFraming(headers);
  if (framing !== undefined) return void setImmediate(() => sink.send(400, FRAMING_HEADERS, JSON.stringify({ detail: framing })));
  if (!hasBody(headers)) return run(() => EMPTY_BODY);
  if (isSmall(headers)) {
    // A small body (a Job call) is gathered first, so the handler reads it without awaiting.
    const parts: Buffer[] = [];
    res.onData((chunk, last) => {
      parts.push(copy(chunk));
      if (last) run(() => (parts.length === 1 ? parts : [Buffer.concat(parts)]));
    });
    return;
  }
  const queue = new BodyQueue(() => res.pause(), () => res.resume());
  abortBody = (err) => queue.fail(err);
  sink.requestBody = queue;
  res.onData((chunk, last) => queue.push(queue.discarding ? EMPTY_CHUNK : chunks.copy(chunk), last));
  run(() => queue);
}
