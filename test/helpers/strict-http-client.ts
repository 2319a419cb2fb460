import { connect, type Socket } from 'node:net';

/**
 * A deliberately strict HTTP/1.1 client on a raw socket, for framing tests: it accepts exactly
 * what a correct server sends and nothing more (no chunk extensions, no bare LF, no trailers, no
 * byte after an answer that was not asked for), and names the stream offset and the bytes around
 * any deviation. Lenient clients (node's http, undici) hide or mangle some framing defects;
 * this one fails on the first wrong byte. Requests on one connection go one after another
 * (keep-alive reuse); the reader can be made slow and jittery to keep the server backpressured.
 */

/** One answer as read. */
export interface StrictAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** How many chunks framed it (0 for a Content-Length body). */
  readonly chunks: number;
}

/** How the client reads: after each read it may pause for `pauseMs()` milliseconds (0: no pause). */
export interface ReadPace {
  pauseMs(): number;
}

export const FAST: ReadPace = { pauseMs: () => 0 };

const HEX_LINE = /^[0-9a-fA-F]{1,8}$/;

/** Decodes answers from a byte stream, throwing on the first framing error. */
export class StrictDecoder {
  #buf: Buffer = Buffer.alloc(0);
  /** Stream offset of #buf[0], for error messages. */
  #base = 0;
  /**
   * Reads not yet joined to #buf, and how many bytes #buf must hold before parsing can go on:
   * a 1 MiB chunk arrives in many reads, and joining each read at once would copy it over and over.
   */
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #need = 0;
  #parts: Buffer[] = [];
  #chunks = 0;
  #head: { status: number; headers: Record<string, string> } | null = null;

  constructor(private readonly answered: (answer: StrictAnswer) => void) {}

  #fail(at: number, what: string): never {
    const around = this.#buf.subarray(Math.max(0, at - 24), at + 24).toString('latin1');
    throw new Error(`framing error at stream offset ${this.#base + at}: ${what}; bytes around it: ${JSON.stringify(around)}`);
  }

  feed(data: Buffer): void {
    this.#pending.push(data);
    this.#pendingBytes += data.length;
    if (this.#buf.length + this.#pendingBytes < this.#need) return;
    this.#buf = this.#buf.length === 0 && this.#pending.length === 1 ? data : Buffer.concat([this.#buf, ...this.#pending]);
    this.#pending = [];
    this.#pendingBytes = 0;
    let at = 0;
    for (;;) {
      const used = this.#head === null ? this.#readHead(at) : this.#readBody(at);
      if (used === at) break;
      at = used;
    }
    this.#base += at;
    this.#buf = this.#buf.subarray(at);
    this.#need = Math.max(0, this.#need - at);
  }

  /** Parsing stopped at `at` until #buf holds `end` bytes (at least one more than now). */
  #wait(at: number, end: number): number {
    this.#need = Math.max(end, this.#buf.length + 1);
    return at;
  }

  /** The connection closed: fine only between answers. */
  closed(): void {
    if (this.#pendingBytes > 0) {
      this.#buf = Buffer.concat([this.#buf, ...this.#pending]);
      this.#pending = [];
      this.#pendingBytes = 0;
    }
    if (this.#head === null && this.#buf.length === 0) return;
    const body = this.#parts.reduce((sum, part) => sum + part.length, 0);
    this.#fail(0, `connection closed inside an answer (${body} body bytes read, ${this.#buf.length} bytes unframed)`);
  }

  #readHead(at: number): number {
    const end = this.#buf.indexOf('\r\n\r\n', at, 'latin1');
    if (end === -1) return this.#wait(at, 0);
    const lines = this.#buf.toString('latin1', at, end).split('\r\n');
    const status = /^HTTP\/1\.1 (\d{3}) [^\r\n]*$/.exec(lines[0]!);
    if (!status) this.#fail(at, 'not an HTTP/1.1 status line');
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+): ?(.*)$/.exec(line);
      if (!m) this.#fail(at, `malformed header line ${JSON.stringify(line)}`);
      const name = m[1]!.toLowerCase();
      if (name in headers) this.#fail(at, `header ${name} twice`);
      headers[name] = m[2]!;
    }
    const chunked = headers['transfer-encoding'];
    if (chunked !== undefined && chunked !== 'chunked') this.#fail(at, `transfer-encoding ${chunked}`);
    if (chunked !== undefined && headers['content-length'] !== undefined) this.#fail(at, 'both chunked and content-length');
    if (chunked === undefined && !/^\d+$/.test(headers['content-length'] ?? '')) this.#fail(at, 'no framing header');
    this.#head = { status: Number(status[1]), headers };
    this.#parts = [];
    this.#chunks = 0;
    return end + 4;
  }

  #readBody(at: number): number {
    const head = this.#head!;
    const length = head.headers['content-length'];
    if (length !== undefined) {
      if (this.#buf.length - at < Number(length)) return this.#wait(at, at + Number(length));
      this.#parts.push(this.#buf.subarray(at, at + Number(length)));
      return this.#answer(at + Number(length));
    }
    const eol = this.#buf.indexOf('\r\n', at, 'latin1');
    if (eol === -1) {
      if (this.#buf.length - at > 10) this.#fail(at, 'chunk size line without CRLF');
      return this.#wait(at, 0);
    }
    const line = this.#buf.toString('latin1', at, eol);
    if (!HEX_LINE.test(line)) this.#fail(at, `invalid chunk size line ${JSON.stringify(line)}`);
    const size = parseInt(line, 16);
    const data = eol + 2;
    if (this.#buf.length < data + size + 2) return this.#wait(at, data + size + 2);
    if (this.#buf[data + size] !== 13 || this.#buf[data + size + 1] !== 10) this.#fail(data + size, `no CRLF after a chunk of ${size} bytes`);
    if (size === 0) return this.#answer(data + 2);
    this.#parts.push(Buffer.from(this.#buf.subarray(data, data + size)));
    this.#chunks++;
    return data + size + 2;
  }

  #answer(at: number): number {
    const head = this.#head!;
    this.#head = null;
    this.answered({ status: head.status, headers: head.headers, body: Buffer.concat(this.#parts), chunks: this.#chunks });
    return at;
  }
}

/** One keep-alive connection that sends requests one at a time and reads each answer strictly. */
export class StrictConnection {
  readonly #socket: Socket;
  readonly #decoder: StrictDecoder;
  #waiting: { resolve: (a: StrictAnswer) => void; reject: (e: Error) => void } | null = null;
  #error: Error | null = null;
  #timer: NodeJS.Timeout | undefined;

  private constructor(socket: Socket, pace: ReadPace) {
    this.#socket = socket;
    this.#decoder = new StrictDecoder((answer) => {
      const waiting = this.#waiting;
      this.#waiting = null;
      if (waiting) waiting.resolve(answer);
      else this.#failWith(new Error('an answer nobody asked for'));
    });
    socket.on('data', (data) => {
      try {
        this.#decoder.feed(data);
      } catch (err) {
        return this.#failWith(err as Error);
      }
      const ms = pace.pauseMs();
      if (ms > 0 && !socket.destroyed) {
        socket.pause();
        this.#timer = setTimeout(() => socket.resume(), ms);
      }
    });
    socket.on('error', (err) => this.#failWith(err));
    socket.on('close', () => {
      try {
        this.#decoder.closed();
        this.#failWith(new Error('connection closed'));
      } catch (err) {
        this.#failWith(err as Error);
      }
    });
  }

  static open(port: number, pace: ReadPace = FAST): Promise<StrictConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.off('error', reject);
        resolve(new StrictConnection(socket, pace));
      });
      socket.once('error', reject);
    });
  }

  #failWith(err: Error): void {
    this.#error ??= err;
    const waiting = this.#waiting;
    this.#waiting = null;
    waiting?.reject(this.#error);
    this.close();
  }

  /** Sends one request and resolves with its answer, or rejects on any framing error. */
  request(method: string, path: string, headers: Record<string, string> = {}, body = ''): Promise<StrictAnswer> {
    if (this.#error) return Promise.reject(this.#error);
    if (this.#waiting) return Promise.reject(new Error('one request at a time'));
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
      const lines = [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1', `content-length: ${Buffer.byteLength(body)}`];
      for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
      this.#socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
    });
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#socket.destroy();
  }
}
