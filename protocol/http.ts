import type { AbortHook } from './abort-hook.js';

/**
 * The small request/response seam between the front-end adapters (uWebSockets.js, node:http)
 * and the routes. Everything an adapter reads from the socket is copied into these values before
 * the handler runs, so handlers may `await` freely.
 */
export interface IncomingRequest {
  /** Upper-case method, e.g. `GET`. */
  readonly method: string;
  /** Raw (still percent-encoded) path without the query, e.g. `/jobs/version`. */
  readonly path: string;
  /**
   * The path exactly as received, set by the front door when it hands routes the decoded `path`;
   * a proxy forwards this one so `%2F` and friends reach the upstream unchanged.
   */
  readonly rawPath?: string;
  /** Raw query string without the leading `?`. */
  readonly query: string;
  /** Header values by lower-case name (repeated headers joined with `, `). */
  readonly headers: Readonly<Record<string, string>>;
  /** Aborted when the client disconnects before the response is complete. */
  readonly signal: AbortSignal;
  /** The same as `signal`, cheaper where a front end gives it directly (see AbortHook). */
  readonly gone: AbortHook;
  /**
   * The body as chunks. Reading pulls from the socket with backpressure; consume at most once.
   * A request without a body yields nothing. A front end that lends its chunks' memory says so
   * on the request (LentChunks, chunk-pool.ts).
   */
  body(): AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
}

export type HeaderMap = Record<string, string>;

/** Response headers; a list sends the header once per value (several `set-cookie`, which cannot be joined). */
export type ResponseHeaders = Record<string, string | string[]>;

/** A streamed response body (a front end may also take broadcast chunks: SharedBodyWriter, shared-body-writer.ts). */
export interface BodyWriter {
  /**
   * Writes a chunk; resolves once the socket can take more (false when the client is gone).
   * `continues`: with a lead (StreamOptions), the next chunk continues this one instead of
   * starting with the lead (one SSE frame written in pieces).
   */
  write(chunk: string | Uint8Array, continues?: boolean): Promise<boolean>;
  /** Ends the body, after `last` when given (it leaves in the same write as the end). */
  end(last?: string | Uint8Array): void;
  /** Drops the connection: the client sees a broken response, not a complete but short one. */
  abort(): void;
}

/** How a streamed body will be written. */
export interface StreamOptions {
  /**
   * ASCII bytes every chunk written starts with, `end(last)` included (SSE: `event: `). A front
   * end whose framing holds back the end of a chunk until the next one (uWS sends a chunk's
   * closing CRLF in front of the next chunk) sends the lead ahead instead, right behind each
   * chunk, so the client can finish reading every chunk as soon as it arrives. A stream with a
   * lead ends with `end(last)`, never a bare `end()`. A chunk written with `continues` is not
   * followed by the lead, and the chunk after it is written as it is.
   */
  readonly lead?: string;
}

export interface ResponseSink {
  /** Sends a complete response; ignored when the client is already gone. */
  send(status: number, headers: ResponseHeaders, body?: string | Uint8Array): void;
  /** Starts a streamed response. */
  stream(status: number, headers: ResponseHeaders, opts?: StreamOptions): BodyWriter;
}

export type Handler = (req: IncomingRequest, res: ResponseSink) => Promise<void>;

export interface ListeningServer {
  readonly port: number;
  readonly adapter: 'uws' | 'node';
  /** Closes the listening socket: no new connections; open ones keep working. */
  stopAccepting(): void;
  /** Closes the listening socket and drops every connection, idle keep-alive ones included. */
  close(): Promise<void>;
}

export interface HttpAdapter {
  readonly name: 'uws' | 'node';
  listen(host: string, port: number, handler: Handler): Promise<ListeningServer>;
}

export const STATUS_TEXT: Readonly<Record<number, string>> = Object.freeze({
  200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 206: 'Partial Content',
  301: 'Moved Permanently', 302: 'Found', 304: 'Not Modified', 307: 'Temporary Redirect', 308: 'Permanent Redirect',
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  406: 'Not Acceptable', 409: 'Conflict', 411: 'Length Required', 413: 'Payload Too Large', 415: 'Unsupported Media Type',
  422: 'Unprocessable Entity', 507: 'Insufficient Storage', 429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway',
  503: 'Service Unavailable', 504: 'Gateway Timeout',
});

const STATUS_LINES = new Map<number, string>();

/** `200 OK` and friends, built once per status. */
export function statusLine(status: number): string {
  let line = STATUS_LINES.get(status);
  if (line === undefined) STATUS_LINES.set(status, (line = `${status} ${STATUS_TEXT[status] ?? 'Status'}`));
  return line;
}
