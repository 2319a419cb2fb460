import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { HttpResponse, TemplatedApp, us_listen_socket } from '@trufflesuite/uws-js-unofficial';
import { AbortPoint, type AbortHook } from './abort-hook.js';
import { BodyQueue } from './body-queue.js';
import { ChunkPool } from './chunk-pool.js';
import { ambiguousFraming } from './request-framing.js';
import { statusLine, type BodyWriter, type Handler, type HeaderMap, type HttpAdapter, type IncomingRequest, type ListeningServer, type ResponseHeaders, type ResponseSink, type StreamOptions } from './http.js';

// Every uWebSockets.js import lives in this file. We load the native binary ourselves: the
// package's own entry silently falls back to a broken JavaScript implementation.
type UwsModule = typeof import('@trufflesuite/uws-js-unofficial');

/** Loads the native uWS binary for this Node ABI, or returns the reason it cannot. */
export function loadNativeUws(): UwsModule | Error {
  try {
    const require = createRequire(import.meta.url);
    const pkgDir = dirname(require.resolve('@trufflesuite/uws-js-unofficial/package.json'));
    const file = join(pkgDir, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
    return require(file) as UwsModule;
  } catch (err) {
    return err as Error;
  }
}

const EMPTY_BODY: readonly Uint8Array[] = [];
/** Why a request was aborted: its client went away. */
const CLIENT_GONE = new Error('client disconnected');
const EMPTY_CHUNK = new Uint8Array(0);
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

/** Whether a chunk starts with the (ASCII) `lead`. */
function startsWith(chunk: string | Uint8Array, lead: string): boolean {
  if (typeof chunk === 'string') return chunk.startsWith(lead);
  if (chunk.byteLength < lead.length) return false;
  for (let i = 0; i < lead.length; i++) if (chunk[i] !== lead.charCodeAt(i)) return false;
  return true;
}

/** Shared chunks without their lead, by chunk (see withoutLead). */
const leadless = new WeakMap<Uint8Array, { lead: string; rest: Uint8Array }>();

/**
 * A shared chunk without its `lead`, made once per chunk (and lead), so ten thousand streams
 * writing it allocate nothing.
 */
function withoutLead(chunk: Uint8Array, lead: string): Uint8Array {
  const known = leadless.get(chunk);
  if (known?.lead === lead) return known.rest;
  if (!startsWith(chunk, lead)) throw new Error(`a streamed chunk does not start with its lead ${JSON.stringify(lead)}`);
  const rest = chunk.subarray(lead.length);
  leadless.set(chunk, { lead, rest });
  return rest;
}

/**
 * Bytes of data one cork carries at most. A write inside a cork that overflows uWS's 16 KiB cork
 * buffer makes uWS flush the buffer first and then write the data; in this build, when that flush
 * fails (the socket is full while uWS's own buffer is empty), uWS buffers the corked bytes and
 * drops the data (AsyncSocket::uncork; fixed upstream in uWebSockets v20.77, commit 6b7f354). For
 * a streamed body that means a chunk header on the wire without its chunk: the client reads the
 * next chunk's framing as data and fails (`Invalid character in chunk size`). So a body chunk
 * never shares a cork with more than fits: a larger one is written as several chunks, one cork
 * each, and a large complete answer goes through tryEnd, whose writes are optional (an optional
 * write that cannot be sent is reported, not dropped). The margin covers a chunk's framing, the
 * first write's header lines and a lead.
 */
const CORK_PIECE = 16 * 1024 - 1024;

/** Byte length of a chunk, without scanning a string that cannot exceed `limit` in UTF-8. */
function exceeds(chunk: string | Uint8Array, limit: number): boolean {
  if (typeof chunk !== 'string') return chunk.byteLength > limit;
  return chunk.length * 3 > limit && Buffer.byteLength(chunk) > limit;
}

const NUDGE_MIN_MS = 50;
const NUDGE_MAX_MS = 2000;
/** How long an answer given before its request body ended waits for the rest of the body. */
const LINGER_MS = 2000;

class UwsResponse implements ResponseSink {
  aborted = false;
  /** Whether send() answered (a large answer is still being written while this is set). */
  #answered = false;
  /** True once the client went away (as opposed to the response being finished). */
  disconnected = false;
  #controller: AbortController | null = null;
  #gone: AbortPoint | null = null;
  #drained: (() => void) | null = null;
  /** How long to wait for onWritable before writing on regardless (grows while nothing drains). */
  #nudgeMs = NUDGE_MIN_MS;
  /** The streamed request body, while it may still be arriving. */
  requestBody: BodyQueue | null = null;

  constructor(
    private readonly res: HttpResponse,
    /** A HEAD request: answers report their length but send no body (uWS would send it). */
    private readonly headOnly = false,
  ) {}

  /** Created on first use: most requests never look at their abort signal. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.disconnected) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  /** The cheap form of `signal` (see AbortHook), also made on first use. */
  get gone(): AbortHook {
    if (!this.#gone) {
      this.#gone = new AbortPoint();
      if (this.disconnected) this.#gone.abort(CLIENT_GONE);
    }
    return this.#gone;
  }

  onAborted(): void {
    this.aborted = true;
    this.disconnected = true;
    this.#controller?.abort();
    this.#gone?.abort(CLIENT_GONE);
    this.#drained?.();
  }

  /** Writes status and headers; `connection: close` is left to uWS's end() unless `writeClose`. */
  #head(status: number, headers: ResponseHeaders, writeClose = false): void {
    this.res.writeStatus(statusLine(status));
    for (const name in headers) {
      const value = headers[name]!;
      // uWS writes content-length itself on end(); a second one would corrupt the response.
      if (name === 'content-length') continue;
      if (name === 'connection' && value === 'close' && !writeClose) continue;
      if (typeof value === 'string') this.res.writeHeader(name, value);
      else for (const v of value) this.res.writeHeader(name, v);
    }
  }

  send(status: number, headers: ResponseHeaders, body: string | Uint8Array = ''): void {
    if (this.aborted || this.#answered) return;
    this.#answered = true; // a response is answered once; later calls are ignored
    const close = headers['connection'] === 'close';
    if (this.requestBody && !this.requestBody.complete) {
      this.aborted = true;
      return this.#answerThenLinger(status, headers, body);
    }
    if (!this.headOnly && exceeds(body, CORK_PIECE)) {
      // Too large for one cork (see CORK_PIECE): written with tryEnd, which ends the response.
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      this.res.cork(() => this.#head(status, headers, close));
      void this.#sized(bytes.byteLength).write(bytes);
      return;
    }
    this.aborted = true;
    this.res.cork(() => {
      this.#head(status, headers);
      if (!this.headOnly) return void this.res.end(body, close);
      // The length by hand: this build's endWithoutBody(length) reports a wrong one, or none.
      this.res.writeHeader('content-length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength));
      this.res.endWithoutBody();
    });
  }

  /**
   * An answer given while the client is still sending a body nobody will read (a 413 mid-upload,
   * a 401 or 422 before it). Left alone, the unread body would pause the socket for good; and
   * uWS's end(…, close) closes at once, and a socket closed with unread data sends a reset that
   * can destroy the answer before the client reads it. So the answer goes out now, the rest of the
   * body is read and dropped, and the response ends once the body has ended (after a
   * `connection: close` answer the client then closes) or, for a client that keeps sending, the
   * connection is cut after LINGER_MS.
   */
  #answerThenLinger(status: number, headers: ResponseHeaders, body: string | Uint8Array): void {
    this.res.cork(() => this.#head(status, headers, true));
    this.#writeChunk(body);
    const timer = setTimeout(() => {
      if (!this.disconnected) this.res.close();
    }, LINGER_MS);
    void this.requestBody!.discard().then(() => {
      clearTimeout(timer);
      if (!this.disconnected) this.res.cork(() => this.res.end());
    });
  }

  /**
   * Waits after a write that reported backpressure. With this uWS build the onWritable that
   * should follow sometimes never comes (measured: a few times in 8 MB of 16 KB writes), which
   * would stall the stream forever; the next write flushes the buffer, so after a short wait we
   * write on. The wait doubles while no onWritable arrives, bounding what a reader that stopped
   * reading can make us buffer.
   */
  #writable(): Promise<void> {
    return new Promise<void>((resolve) => {
      let waiting = true;
      // uWS keeps calling an onWritable handler until another replaces it: only the first call counts.
      const done = () => {
        if (!waiting) return;
        waiting = false;
        clearTimeout(timer);
        this.#drained = null;
        resolve();
      };
      const timer = setTimeout(() => {
        this.#nudgeMs = Math.min(this.#nudgeMs * 2, NUDGE_MAX_MS);
        done();
      }, this.#nudgeMs);
      this.#drained = done;
      this.res.onWritable(() => {
        // uWS hands a writable socket to this handler instead of sending what it buffered itself:
        // an empty cork (its uncork writes the buffer first) sends it now, not with our next write.
        this.res.cork(() => {});
        this.#nudgeMs = NUDGE_MIN_MS;
        done();
        return true;
      });
    });
  }

  /**
   * Writes `data` as one chunk, or as several when it is too large for one cork (CORK_PIECE),
   * `after` (a lead) right behind the last; false when the socket buffered some of it.
   */
  #writeChunk(data: string | Uint8Array, after?: string): boolean {
    let ok = true;
    let last = data;
    if (exceeds(data, CORK_PIECE)) {
      const bytes = typeof data === 'string' ? Buffer.from(data) : data;
      let at = 0;
      for (; bytes.byteLength - at > CORK_PIECE; at += CORK_PIECE) {
        const piece = bytes.subarray(at, at + CORK_PIECE);
        this.res.cork(() => (ok = this.res.write(piece) && ok));
      }
      last = bytes.subarray(at);
    }
    this.res.cork(() => {
      ok = this.res.write(last) && ok;
      if (after !== undefined) ok = this.res.write(after) && ok;
    });
    return ok;
  }

  stream(status: number, headers: ResponseHeaders, opts: StreamOptions = {}): BodyWriter {
    const length = headers['content-length'];
    if (typeof length === 'string' && /^\d+$/.test(length)) {
      if (!this.aborted) this.res.cork(() => this.#head(status, headers));
      return this.#sized(Number(length));
    }
    // uWS frames each write as CRLF (closing the previous chunk), size, CRLF, data: a chunk is
    // complete on the wire only once the next one starts. With a lead, every chunk is written
    // without it and followed by the lead (the start of the next chunk), so the CRLF closing
    // each chunk leaves with it. The first lead also completes the head at once.
    const lead = opts.lead;
    /** Whether the lead is on the wire, owed by the next chunk (not after a chunk that continues). */
    let leadSent = lead !== undefined;
    const rest = (chunk: string | Uint8Array): string | Uint8Array => {
      if (lead === undefined || !leadSent) return chunk;
      if (!startsWith(chunk, lead)) throw new Error(`a streamed chunk does not start with its lead ${JSON.stringify(lead)}`);
      return typeof chunk === 'string' ? chunk.slice(lead.length) : chunk.subarray(lead.length);
    };
    if (!this.aborted) {
      this.res.cork(() => {
        this.#head(status, headers);
        if (lead !== undefined) this.res.write(lead);
      });
    }
    const write = async (chunk: string | Uint8Array, continues = false): Promise<boolean> => {
      if (this.aborted) return false;
      const data = rest(chunk);
      leadSent = lead !== undefined && !continues;
      const ok = this.#writeChunk(data, leadSent ? lead : undefined);
      if (!ok && !this.aborted) await this.#writable();
      return !this.aborted;
    };
    // A broadcast writes one chunk to thousands of streams: like a bare uWS server, one cork (one
    // send) each, through a callback made once per stream, not once per write. The lead is a chunk
    // of its own, as in `write`: its framing carries the CRLF that completes the shared chunk.
    const leadBytes = lead === undefined ? undefined : Buffer.from(lead, 'latin1');
    let shared: Uint8Array = EMPTY_CHUNK;
    let sharedTaken = true;
    const writeCorked = () => {
      sharedTaken = this.res.write(shared);
      if (leadBytes) sharedTaken = this.res.write(leadBytes) && sharedTaken;
    };
    return {
      write,
      writeShared: (chunk) => {
        if (this.aborted) return false;
        // After a chunk that continues, the next one is written as it is: the ordinary way.
        if (lead !== undefined && !leadSent) return write(chunk);
        shared = lead === undefined ? chunk : withoutLead(chunk, lead);
        if (shared.byteLength > CORK_PIECE) sharedTaken = this.#writeChunk(shared, lead);
        else this.res.cork(writeCorked);
        shared = EMPTY_CHUNK;
        if (sharedTaken) return true;
        return this.aborted ? false : this.#writable().then(() => !this.aborted);
      },
      end: (last) => {
        if (this.aborted) return;
        this.aborted = true;
        // Body chunks still to come have no reader now; the ended response must not be paused.
        if (this.requestBody && !this.requestBody.complete) void this.requestBody.discard();
        let data = last === undefined ? undefined : rest(last);
        if (data !== undefined && exceeds(data, CORK_PIECE)) {
          this.#writeChunk(data);
          data = undefined;
        }
        this.res.cork(() => (data === undefined ? this.res.end() : this.res.end(data)));
      },
      abort: () => {
        if (this.aborted) return;
        this.aborted = true;
        this.res.close();
      },
    };
  }

  /**
   * A body of known length (a file download): written with tryEnd, so uWS sends Content-Length
   * instead of chunked encoding. tryEnd takes what the socket accepts and leaves the rest to us
   * (it keeps no copy), so a write resolves once the whole chunk is on the socket and its memory
   * may be reused. The rest is written from inside onWritable, as uWS's own streaming example
   * does: resolving there and writing a turn later missed onWritable events (a 1 GiB download
   * waited on the 50 ms fallback about 20 times).
   */
  #sized(total: number): BodyWriter {
    /** Offers `data` (which starts at body offset `at`) from `offset` on; true once all of it is on the socket. */
    const offer = (data: Uint8Array, at: number, offset: number): boolean => {
      let ok = false;
      let done = false;
      this.res.cork(() => ([ok, done] = this.res.tryEnd(data.subarray(offset - at), total)));
      if (done) this.aborted = true; // the response is complete
      return ok || done;
    };
    return {
      write: (chunk) =>
        new Promise<boolean>((resolve) => {
          const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
          if (this.aborted) return resolve(false);
          const at = this.res.getWriteOffset();
          if (offer(data, at, at)) return resolve(true);
          // Fallback for a lost onWritable: offer the rest again after a while regardless.
          let timer: NodeJS.Timeout | undefined;
          let delay = NUDGE_MIN_MS;
          const settle = (written: boolean) => {
            clearTimeout(timer);
            this.#drained = null;
            resolve(written && !this.disconnected);
          };
          const retry = (): boolean => {
            if (this.disconnected) return settle(false), true;
            const written = offer(data, at, this.res.getWriteOffset());
            if (written) settle(true);
            else arm();
            return written;
          };
          const arm = () => {
            clearTimeout(timer);
            timer = setTimeout(retry, delay);
            delay = Math.min(delay * 2, NUDGE_MAX_MS);
          };
          this.#drained = () => settle(false);
          arm();
          this.res.onWritable(retry);
        }),
      end: () => {
        if (this.aborted) return;
        this.aborted = true;
        this.res.cork(() => {
          if (this.res.getWriteOffset() > 0 || total === 0) return void this.res.end();
          // Nothing written: a HEAD answer, which reports the length without a body. (This
          // build's endWithoutBody(length) leaves the connection stuck; the header by hand does not.)
          this.res.writeHeader('content-length', String(total));
          this.res.endWithoutBody();
        });
      },
      abort: () => {
        if (this.aborted) return;
        this.aborted = true;
        this.res.close();
      },
    };
  }
}

/** A request as read in uWS's callback (a class: its getter then costs nothing per request). */
class UwsRequest implements IncomingRequest {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly query: string,
    readonly headers: HeaderMap,
    private readonly sink: UwsResponse,
    readonly body: () => AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
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

export const uwsAdapter = (uws: UwsModule): HttpAdapter => ({
  name: 'uws',
  listen(host: string, port: number, handler: Handler): Promise<ListeningServer> {
    const app: TemplatedApp = uws.App();
    const chunks = new ChunkPool();
    app.any('/*', (res, req) => {
      // Read everything from `req` now: it is invalid after this callback returns.
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
      const run = (body: () => AsyncIterable<Uint8Array> | Iterable<Uint8Array>) => {
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
    });
    return new Promise((resolve, reject) => {
      app.listen(host, port, (socket: us_listen_socket | false) => {
        if (!socket) return reject(new Error(`cannot listen on ${host}:${port} (address in use or not available)`));
        let listening = true;
        const stopAccepting = () => {
          if (listening) uws.us_listen_socket_close(socket);
          listening = false;
        };
        resolve({
          port: uws.us_socket_local_port(socket as unknown as Parameters<UwsModule['us_socket_local_port']>[0]),
          adapter: 'uws',
          stopAccepting,
          close: async () => {
            stopAccepting();
            // Closing only the listening socket leaves idle keep-alive connections open, and they
            // keep the event loop (and so the process) alive until each client gives up.
            (app as TemplatedApp & { close(): void }).close();
          },
        });
      });
    });
  },
});
