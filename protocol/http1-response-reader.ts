/** Largest response head accepted from an upstream; a bigger one is a broken peer. */
const MAX_HEAD_BYTES = 64 * 1024;
/** Largest chunk-size or trailer line accepted in a chunked body. */
const MAX_LINE_BYTES = 4096;
const CR = 13;
const LF = 10;
const STATUS_LINE = /^HTTP\/1\.[01] (\d{3})(?: |$)/;

/** The head of an HTTP/1.1 response: repeated headers are joined with `, `. */
export interface ResponseHead {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
}

/** What a ResponseReader found, in order: one head, body bytes (decoded), one end. */
export interface ResponseEvents {
  head(head: ResponseHead): void;
  data(chunk: Buffer): void;
  /** The body is complete; `reusable`: the connection may carry another exchange. */
  end(reusable: boolean): void;
}

type State = 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'chunk-crlf' | 'trailer' | 'until-close' | 'done';

/**
 * Reads one HTTP/1.1 response from a connection's bytes as they arrive, in linear time:
 * Content-Length, chunked and close-delimited bodies, interim 1xx heads skipped. A peer that
 * breaks the protocol makes `feed` throw; the connection must then be dropped. Body chunks are
 * views of the fed buffers, never copies.
 */
export class ResponseReader {
  #state: State = 'head';
  #pending: Buffer | undefined;
  #line = '';
  #remaining = 0;
  #reusable = true;

  constructor(
    private readonly on: ResponseEvents,
    /** A HEAD request: the answer has no body whatever its headers say. */
    private readonly headRequest = false,
  ) {}

  /** Whether any byte of the response arrived (a reused connection closed before that may be retried). */
  get started(): boolean {
    return this.#state !== 'head' || this.#pending !== undefined;
  }

  feed(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      switch (this.#state) {
        case 'head':
          at = this.#readHead(chunk, at);
          break;
        case 'length':
        case 'chunk-data':
          at = this.#readCounted(chunk, at);
          break;
        case 'chunk-crlf':
          if (chunk[at] !== (this.#remaining === 2 ? CR : LF)) throw new Error('malformed chunked body (no CRLF after a chunk)');
          at++;
          if (--this.#remaining === 0) this.#state = 'chunk-size';
          break;
        case 'chunk-size':
        case 'trailer':
          at = this.#readLine(chunk, at);
          break;
        case 'until-close':
          this.on.data(at === 0 ? chunk : chunk.subarray(at));
          at = chunk.length;
          break;
        case 'done':
          throw new Error('the peer sent bytes after its answer');
      }
    }
  }

  /** The connection closed: completes a close-delimited body, otherwise the answer is broken. */
  closed(): void {
    if (this.#state === 'until-close') return this.#finish();
    if (this.#state !== 'done') throw new Error(this.started ? 'connection closed before the answer was complete' : 'connection closed before an answer');
  }

  #readHead(chunk: Buffer, at: number): number {
    const before = this.#pending?.length ?? 0;
    const data = this.#pending ? Buffer.concat([this.#pending, chunk.subarray(at)]) : chunk.subarray(at);
    const end = data.indexOf('\r\n\r\n', Math.max(0, before - 3), 'latin1');
    if (end === -1) {
      if (data.length > MAX_HEAD_BYTES) throw new Error(`response head larger than ${MAX_HEAD_BYTES} bytes`);
      this.#pending = data;
      return chunk.length;
    }
    this.#pending = undefined;
    const head = data.toString('latin1', 0, end);
    const eol = head.indexOf('\r\n');
    const status = STATUS_LINE.exec(eol === -1 ? head : head.slice(0, eol));
    if (!status) throw new Error(`not an HTTP/1.1 response: ${JSON.stringify(head.slice(0, 40))}`);
    const statusCode = Number(status[1]);
    // No prototype: a header named `constructor` or `__proto__` is just a header.
    const headers = Object.create(null) as Record<string, string>;
    // One pass over the header lines, without splitting the head into an array first.
    for (let line = eol === -1 ? head.length : eol + 2; line < head.length; ) {
      const next = head.indexOf('\r\n', line);
      const stop = next === -1 ? head.length : next;
      const colon = head.indexOf(':', line);
      if (colon <= line || colon > stop) throw new Error('malformed response header line');
      const name = head.slice(line, colon).trim().toLowerCase();
      const value = head.slice(colon + 1, stop).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
      line = stop + 2;
    }
    const consumed = at + end + 4 - before;
    if (statusCode < 200) return consumed; // 100 Continue and friends: the real head follows
    this.#frame(statusCode, headers);
    this.on.head({ statusCode, headers });
    if (this.#state === 'done') this.on.end(this.#reusable);
    return consumed;
  }

  /** Picks how the body ends, as RFC 9112 section 6.3 orders it. */
  #frame(statusCode: number, headers: Record<string, string>): void {
    const connection = headers['connection'];
    const encoding = headers['transfer-encoding'];
    this.#reusable = connection === undefined || !/(?:^|,)\s*close\s*(?:,|$)/i.test(connection);
    const length = headers['content-length'];
    if (this.headRequest || statusCode === 204 || statusCode === 304) this.#state = 'done';
    else if (encoding !== undefined && /(?:^|,)\s*chunked\s*$/i.test(encoding)) this.#state = 'chunk-size';
    else if (length !== undefined) {
      if (!/^\d{1,15}$/.test(length)) throw new Error(`malformed Content-Length ${JSON.stringify(length.slice(0, 40))}`);
      this.#remaining = Number(length);
      this.#state = this.#remaining === 0 ? 'done' : 'length';
    } else {
      this.#state = 'until-close';
      this.#reusable = false;
    }
  }

  #readCounted(chunk: Buffer, at: number): number {
    const n = Math.min(this.#remaining, chunk.length - at);
    this.on.data(at === 0 && n === chunk.length ? chunk : chunk.subarray(at, at + n));
    this.#remaining -= n;
    if (this.#remaining === 0) {
      if (this.#state === 'length') this.#finish();
      else {
        this.#state = 'chunk-crlf';
        this.#remaining = 2;
      }
    }
    return at + n;
  }

  #readLine(chunk: Buffer, at: number): number {
    const nl = chunk.indexOf(LF, at);
    if (nl === -1 || this.#line.length + nl - at > MAX_LINE_BYTES) {
      this.#line += chunk.toString('latin1', at, nl === -1 ? chunk.length : nl);
      if (this.#line.length > MAX_LINE_BYTES) throw new Error('malformed chunked body (line too long)');
      return chunk.length;
    }
    const line = (this.#line + chunk.toString('latin1', at, nl)).replace(/\r$/, '');
    this.#line = '';
    if (this.#state === 'trailer') {
      if (line === '') this.#finish();
      return nl + 1;
    }
    const size = /^([0-9a-fA-F]{1,13})\s*(?:;.*)?$/.exec(line);
    if (!size) throw new Error(`malformed chunk size ${JSON.stringify(line.slice(0, 40))}`);
    this.#remaining = parseInt(size[1]!, 16);
    this.#state = this.#remaining === 0 ? 'trailer' : 'chunk-data';
    return nl + 1;
  }

  #finish(): void {
    this.#state = 'done';
    this.on.end(this.#reusable);
  }
}
