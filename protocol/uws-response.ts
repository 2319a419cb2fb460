import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { AbortPoint, type AbortHook } from './abort-hook.js';
import { statusLine, type BodyWriter, type ResponseHeaders, type ResponseSink, type StreamOptions } from './http.js';
import { chunkedBody } from './uws-chunked-body.js';
import { CORK_PIECE, exceeds } from './uws-chunks.js';
import { sizedBody } from './uws-sized-body.js';
import { UwsSocket } from './uws-socket.js';

/** Why a request was aborted: its client went away. */
export const CLIENT_GONE = new Error('client disconnected');
/** How long an answer given before its request body ended waits for the rest of the body. */
const LINGER_MS = 2000;

/** The answer to one request on uWS: a complete one (send) or a streamed body (stream). */
export class UwsResponse extends UwsSocket implements ResponseSink {
  /** Whether send() answered (a large answer is still being written while this is set). */
  #answered = false;
  #controller: AbortController | null = null;
  #gone: AbortPoint | null = null;

  constructor(
    res: HttpResponse,
    /** A HEAD request: answers report their length but send no body (uWS would send it). */
    private readonly headOnly = false,
  ) {
    super(res);
  }

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
    this.settleWait?.();
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
      void sizedBody(this, bytes.byteLength).write(bytes);
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
    this.writeChunk(body);
    const timer = setTimeout(() => {
      if (!this.disconnected) this.res.close();
    }, LINGER_MS);
    void this.requestBody!.discard().then(() => {
      clearTimeout(timer);
      if (!this.disconnected) this.res.cork(() => this.res.end());
    });
  }

  stream(status: number, headers: ResponseHeaders, opts: StreamOptions = {}): BodyWriter {
    const length = headers['content-length'];
    if (typeof length === 'string' && /^\d+$/.test(length)) {
      if (!this.aborted) this.res.cork(() => this.#head(status, headers));
      return sizedBody(this, Number(length));
    }
    // The head leaves with the first lead, so the client has it at once (see chunkedBody).
    const lead = opts.lead;
    if (!this.aborted) {
      this.res.cork(() => {
        this.#head(status, headers);
        if (lead !== undefined) this.res.write(lead);
      });
    }
    return chunkedBody(this, lead);
  }
}
