import { connect, type Socket } from 'node:net';

export interface LoadOptions {
  port: number;
  host?: string;
  /** The raw HTTP/1.1 request, sent again each time the previous response has fully arrived. */
  request: Buffer;
  connections: number;
  durationMs: number;
  warmupMs?: number;
  /** Whether a 200 answer's body is a success; one that is not counts as an error. */
  ok?: (body: Buffer) => boolean;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** Every answer received, warm-up and drain included (to divide CPU measured around the whole run by). */
  answered: number;
}

/** Builds a keep-alive request with a Content-Length body. */
export function rawRequest(method: string, path: string, headers: Record<string, string> = {}, body = ''): Buffer {
  const lines = [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1', 'connection: keep-alive'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (body || method === 'POST') lines.push(`content-length: ${Buffer.byteLength(body)}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

export function percentile(sorted: Float64Array | number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** One whole HTTP/1.1 response, as the raw clients here read it. */
export interface RawResponse {
  status: number;
  body: Buffer;
}

/**
 * Cuts responses out of a socket's byte stream: Content-Length framed (all this service answers
 * outside SSE and streamed answers) or chunked (a streamed answer such as a long
 * `list_task_statuses`). Returns false on a response it cannot frame.
 */
function responseFramer(onResponse: (res: RawResponse) => void): (chunk: Buffer) => boolean {
  let buffer: Buffer = Buffer.alloc(0);
  // Bytes of a large body still arriving: kept as a list and joined once complete, not re-joined
  // at every chunk (quadratic for a 5 MB answer).
  const parts: Buffer[] = [];
  let have = 0;
  let need = 0;
  /** A chunked body being read: its status and decoded parts; `buffer` holds what is not decoded yet. */
  let chunked: { status: number; parts: Buffer[]; size: number } | undefined;
  const readChunked = (): boolean | 'more' => {
    const body = chunked!;
    for (;;) {
      const lineEnd = buffer.indexOf('\r\n');
      if (lineEnd === -1) return 'more';
      const size = parseInt(buffer.subarray(0, lineEnd).toString('latin1'), 16);
      if (!Number.isFinite(size)) return false;
      if (buffer.length < lineEnd + 2 + size + 2) return 'more';
      if (size === 0) {
        buffer = buffer.subarray(lineEnd + 4);
        chunked = undefined;
        onResponse({ status: body.status, body: Buffer.concat(body.parts, body.size) });
        return true;
      }
      body.parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
      body.size += size;
      buffer = buffer.subarray(lineEnd + 2 + size + 2);
    }
  };
  return (chunk) => {
    if (need > 0) {
      parts.push(chunk);
      have += chunk.length;
      if (have < need) return true;
      buffer = Buffer.concat(parts, have);
      parts.length = 0;
      need = 0;
    } else buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
    for (;;) {
      if (chunked) {
        const done = readChunked();
        if (done !== true) return done !== false;
        continue;
      }
      const headEnd = buffer.indexOf('\r\n\r\n');
      if (headEnd === -1) return true;
      const head = buffer.subarray(0, headEnd).toString('latin1');
      if (/transfer-encoding:\s*chunked/i.test(head)) {
        chunked = { status: Number(head.slice(9, 12)), parts: [], size: 0 };
        buffer = buffer.subarray(headEnd + 4);
        continue;
      }
      const match = /content-length:\s*(\d+)/i.exec(head);
      if (!match) return false;
      const total = headEnd + 4 + Number(match[1]);
      if (buffer.length < total) {
        parts.push(buffer);
        have = buffer.length;
        need = total;
        buffer = Buffer.alloc(0);
        return true;
      }
      const body = buffer.subarray(headEnd + 4, total);
      buffer = buffer.subarray(total);
      onResponse({ status: Number(head.slice(9, 12)), body });
    }
  };
}

async function openSocket(port: number, host = '127.0.0.1'): Promise<Socket> {
  return new Promise<Socket>((resolve, reject) => {
    const socket = connect(port, host, () => resolve(socket));
    socket.setNoDelay(true);
    socket.once('error', reject);
  });
}

/**
 * One keep-alive connection answering one request at a time: a client far lighter than fetch,
 * for benches whose point is the CPU the service uses, not the client's.
 */
export class RawConnection {
  readonly #socket: Socket;
  #waiting: { resolve(res: RawResponse): void; reject(err: Error): void } | undefined;
  #failed: Error | undefined;

  private constructor(socket: Socket) {
    this.#socket = socket;
    const frame = responseFramer((res) => this.#settle()?.resolve(res));
    socket.on('data', (chunk: Buffer) => {
      if (!frame(chunk)) socket.destroy(new Error('response neither Content-Length framed nor chunked'));
    });
    socket.on('error', (err) => (this.#failed = err));
    // Closed while idle too (a server's keep-alive timeout): the next request must fail, not wait.
    socket.on('close', () => {
      this.#failed ??= new Error('connection closed');
      this.#settle()?.reject(this.#failed);
    });
  }

  static async open(port: number, host?: string): Promise<RawConnection> {
    return new RawConnection(await openSocket(port, host));
  }

  request(raw: Buffer): Promise<RawResponse> {
    if (this.#failed) return Promise.reject(this.#failed);
    return new Promise<RawResponse>((resolve, reject) => {
      this.#waiting = { resolve, reject };
      this.#socket.write(raw);
    });
  }

  close(): void {
    this.#socket.destroy();
  }

  #settle() {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    return waiting;
  }
}

/**
 * A closed-loop load generator on raw sockets: each connection sends one request, waits for its
 * whole response (Content-Length framed), records the latency and sends the next. Much lighter
 * than an HTTP client library, so on a 2-core machine more of the CPU goes to the server.
 */
export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  let answered = 0;
  let recording = false;
  let stopped = false;
  const sockets: Socket[] = [];

  const drive = (socket: Socket) =>
    new Promise<void>((resolve) => {
      let sentAt = 0;
      const send = () => {
        if (stopped) return resolve();
        sentAt = performance.now();
        socket.write(opts.request);
      };
      const frame = responseFramer((res) => {
        answered++;
        if (res.status !== 200 || (opts.ok && !opts.ok(res.body))) errors++;
        if (recording) latencies.push(performance.now() - sentAt);
        send();
      });
      socket.on('data', (chunk: Buffer) => {
        if (frame(chunk)) return;
        errors++;
        socket.destroy();
        resolve();
      });
      socket.on('error', () => {
        errors++;
        resolve();
      });
      socket.on('close', () => resolve());
      send();
    });

  const connected = await Promise.all(Array.from({ length: opts.connections }, () => openSocket(opts.port, opts.host)));
  sockets.push(...connected);
  const done = Promise.all(connected.map(drive));
  await new Promise((r) => setTimeout(r, opts.warmupMs ?? 1000));
  recording = true;
  const start = performance.now();
  await new Promise((r) => setTimeout(r, opts.durationMs));
  recording = false;
  const elapsed = performance.now() - start;
  stopped = true;
  await Promise.race([done, new Promise((r) => setTimeout(r, 2000))]);
  for (const s of sockets) s.destroy();
  const sorted = Float64Array.from(latencies).sort();
  return { requests: latencies.length, rps: (latencies.length / elapsed) * 1000, p50: percentile(sorted, 50), p99: percentile(sorted, 99), errors, answered };
}
