import type { AbortHook } from './abort-hook.js';
import { BodyChannel } from './body-channel.js';
import { Connection, writeSoon } from './pool-connection.js';
import { ResponseReader, type ResponseHead } from './http1-response-reader.js';
import { CONNECT_TIMEOUT_MS, UpstreamError, type UpstreamResponse } from './upstream.js';

/** An idle connection is closed after this long, before the peer's own keep-alive timeout (uWS: 10 s). */
const IDLE_MS = 4_000;
/** Idle connections kept per origin; more are closed once they finish. */
const MAX_IDLE = 256;

/** One request to the pool's origin. */
export interface PoolRequest {
  method: string;
  /** Path and query, already percent-encoded. */
  path: string;
  /** Header lines, each `name: value\r\n` (host and content-length are added). */
  headerLines: string;
  body?: string | undefined;
  /** Aborting drops the connection, a body still being read included. */
  abort?: AbortHook;
  /**
   * Answers whose body completes within this many bytes are read before resolving and come
   * back `whole`; longer ones resolve as a stream once they pass it (0: at the head).
   */
  wholeUpTo: number;
}

/** An answer from the pool: `whole` when the body was read complete, else read it by iterating. */
export interface PooledResponse extends UpstreamResponse {
  readonly whole: Buffer | undefined;
}

/**
 * A PooledResponse as a class: an object literal with a computed `[Symbol.asyncIterator]` key
 * goes through V8's slow path for every answer.
 */
class Answer implements PooledResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string>;

  constructor(
    head: ResponseHead,
    readonly whole: Buffer | undefined,
    private readonly channel: BodyChannel | undefined,
  ) {
    this.statusCode = head.statusCode;
    this.headers = head.headers;
  }

  destroy(): void {
    this.channel?.destroy();
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    return (this.channel ?? BodyChannel.of(this.whole!))[Symbol.asyncIterator]();
  }
}

/**
 * A lean keep-alive HTTP/1.1 client for one origin: a request goes out in one write on an idle
 * connection (or a new one), batched with the others of the same event-loop turn (`writeSoon`),
 * and its answer is framed by ResponseReader. No timer is set per
 * request: only connecting is bounded (the socket's timer, once per connection), and one pool
 * timer closes connections idle for `idleMs` (re-arming a socket's timer at every exchange cost
 * a forwarded call more than its framing). Made for forwarded Job calls, where undici's general
 * request path cost more than the call.
 */
export class KeepAlivePool {
  /** Idle connections, oldest parked first: reuse takes the newest, the sweep drops the oldest. */
  readonly #idle: Connection[] = [];
  readonly #all = new Set<Connection>();
  readonly #idleMs: number;
  #sweep: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(
    private readonly origin: URL,
    opts: { idleMs?: number } = {},
  ) {
    this.#idleMs = opts.idleMs ?? IDLE_MS;
  }

  /** One exchange as one awaited value: the answer, or an UpstreamError (the hook's reason when aborted). */
  request(req: PoolRequest): Promise<PooledResponse> {
    if (req.abort?.aborted) return Promise.reject(req.abort.reason);
    if (this.#closed) return Promise.reject(new UpstreamError('the service is stopping', 'ECLOSED'));
    const body = req.body ?? '';
    const bytes = `${req.method} ${req.path} HTTP/1.1\r\nhost: ${this.origin.host}\r\n${req.headerLines}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    return new Promise<PooledResponse>((resolve, reject) => this.#send(req, bytes, resolve, reject, true));
  }

  /** Drops every connection, idle or busy; later requests fail. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#sweep);
    for (const conn of this.#all) conn.socket.destroy();
    this.#idle.length = 0;
  }

  #send(req: PoolRequest, bytes: string, resolve: (r: PooledResponse) => void, reject: (e: Error) => void, mayRetry: boolean): void {
    const conn = this.#idle.pop() ?? this.#connect();
    const { socket } = conn;
    const reused = conn.served++ > 0;
    if (reused) socket.ref();
    let head: ResponseHead | undefined;
    let parts: Buffer[] = [];
    let size = 0;
    let channel: BodyChannel | undefined;
    const answer = (whole: Buffer | undefined) => resolve(new Answer(head!, whole, channel));
    // From here on the body streams: what was read so far first, the rest as it arrives.
    const stream = () => {
      channel = new BodyChannel({ pause: () => socket.pause(), resume: () => socket.resume(), destroy: () => socket.destroy() });
      for (const part of parts) channel.push(part);
      parts = [];
      answer(undefined);
    };
    const onAbort = () => socket.destroy(req.abort!.reason as Error);
    const finish = (reusable: boolean) => {
      conn.carried = undefined;
      req.abort?.unlisten(onAbort);
      if (reusable && !this.#closed && this.#idle.length < MAX_IDLE) this.#park(conn);
      else socket.destroy();
    };
    const reader = new ResponseReader(
      {
        head: (h) => {
          head = h;
          if (req.wholeUpTo === 0) stream();
        },
        data: (chunk) => {
          if (channel) return channel.push(chunk);
          parts.push(chunk);
          size += chunk.length;
          if (size > req.wholeUpTo) stream();
        },
        end: (reusable) => {
          if (channel) channel.end();
          else answer(parts.length === 1 ? parts[0]! : Buffer.concat(parts, size));
          finish(reusable);
        },
      },
      req.method === 'HEAD',
    );
    conn.carried = {
      data: (chunk) => {
        try {
          reader.feed(chunk);
        } catch (err) {
          socket.destroy(new UpstreamError((err as Error).message, 'EPROTO'));
        }
      },
      closed: () => {
        conn.carried = undefined;
        req.abort?.unlisten(onAbort);
        try {
          return reader.closed(); // a close-delimited body ends here
        } catch (early) {
          // A kept-alive connection the peer closed just as it was reused: the request never ran.
          const stale = reused && mayRetry && !reader.started && conn.failure?.name !== 'UpstreamError';
          if (stale && !req.abort?.aborted && !this.#closed) return this.#send(req, bytes, resolve, reject, false);
          const err = req.abort?.aborted ? (req.abort.reason as Error) : asUpstreamError(conn.failure ?? (early as Error), head !== undefined);
          if (channel) channel.fail(err);
          else reject(err);
        }
      },
    };
    req.abort?.listen(onAbort); // stopped when the exchange ends
    writeSoon(socket, bytes);
  }

  #connect(): Connection {
    const { hostname, port, protocol } = this.origin;
    const tls = protocol === 'https:';
    const conn = new Connection({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || (tls ? 443 : 80)), tls });
    const { socket } = conn;
    this.#all.add(conn);
    socket.setNoDelay(true);
    // The socket's timer bounds connecting only; idling is the pool's sweep.
    socket.setTimeout(CONNECT_TIMEOUT_MS);
    socket.once('timeout', () => socket.destroy(new UpstreamError(`connect timeout after ${CONNECT_TIMEOUT_MS} ms`, 'ETIMEDOUT')));
    socket.once(tls ? 'secureConnect' : 'connect', () => socket.setTimeout(0));
    socket.on('close', () => {
      this.#all.delete(conn);
      const at = this.#idle.indexOf(conn);
      if (at !== -1) this.#idle.splice(at, 1);
    });
    return conn;
  }

  /** Keeps a connection for the next request; an idle one does not keep the process alive. */
  #park(conn: Connection): void {
    if (conn.socket.isPaused()) conn.socket.resume(); // a streamed body paused it; resume() on a flowing one still costs a tick
    conn.socket.unref();
    conn.idleSince = performance.now();
    this.#idle.push(conn);
    this.#sweep ??= setTimeout(() => this.#sweepIdle(), this.#idleMs).unref();
  }

  /** Closes the connections idle for `idleMs` or more, and waits for the next one to be due. */
  #sweepIdle(): void {
    this.#sweep = undefined;
    const now = performance.now();
    let stale = 0;
    while (stale < this.#idle.length && now - this.#idle[stale]!.idleSince >= this.#idleMs) stale++;
    for (const conn of this.#idle.splice(0, stale)) conn.socket.destroy();
    const oldest = this.#idle[0];
    if (oldest && !this.#closed) this.#sweep = setTimeout(() => this.#sweepIdle(), this.#idleMs - (now - oldest.idleSince)).unref();
  }
}

function asUpstreamError(err: Error & { code?: string }, afterHead: boolean): UpstreamError {
  const code = err.code ?? 'ECONNRESET';
  return new UpstreamError(err.message.includes(code) ? err.message : `${code}: ${err.message}`, code, afterHead);
}
