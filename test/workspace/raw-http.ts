import { connect, type Socket } from 'node:net';

/** A response read off a raw socket. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends a hand-written request head on a raw TCP socket, lets `feed` write the body (it is told
 * whether the response already arrived), and resolves with the response once its body is
 * complete or the socket closes. For requests fetch() refuses to send: bad Content-Length,
 * bodies shorter than announced, chunked bodies that do not stop.
 */
export function rawExchange(url: string, head: string, feed?: (socket: Socket, answered: () => boolean) => Promise<void>): Promise<RawResponse | null> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    let parsed: RawResponse | null = null;
    const finish = () => {
      socket.destroy();
      resolve(parsed);
    };
    const parse = () => {
      const text = received.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return;
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      const body = received.subarray(Buffer.byteLength(text.slice(0, end + 4), 'latin1'));
      parsed = { status: Number(statusLine?.split(' ')[1]), headers, body: body.toString('utf8') };
      if (headers['content-length'] !== undefined && body.length >= Number(headers['content-length'])) finish();
    };
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      parse();
    });
    socket.on('error', () => undefined);
    socket.on('close', finish);
    socket.write(head.replace(/\n/g, '\r\n') + '\r\n');
    void feed?.(socket, () => parsed !== null).catch(() => undefined);
  });
}

/** Writes a chunk and waits until the socket accepted it (false when it failed). */
export function writeChunk(socket: Socket, chunk: string | Uint8Array): Promise<boolean> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve(false);
    socket.write(chunk, (err) => resolve(!err));
  });
}

/**
 * One keep-alive connection for requests written by hand: `send` writes a request (head and body)
 * and resolves with the status of the next complete response (Content-Length or chunked), or
 * null when the connection closed first.
 */
export async function rawConnection(url: string): Promise<{ send(head: string, body?: Uint8Array): Promise<number | null>; close(): void }> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => undefined);
  let received = Buffer.alloc(0);
  let waiting: ((status: number | null) => void) | null = null;
  const complete = (): number | null => {
    const end = received.indexOf('\r\n\r\n');
    if (end === -1) return null;
    const head = received.subarray(0, end).toString('latin1');
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    let total: number;
    if (length) total = end + 4 + Number(length[1]);
    else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      const last = received.indexOf('\r\n0\r\n\r\n', end);
      if (last === -1) return null;
      total = last + 7;
    } else return null;
    if (received.length < total) return null;
    received = received.subarray(total);
    return Number(head.split(' ')[1]);
  };
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    const status = waiting ? complete() : null;
    if (status !== null) {
      const resolve = waiting!;
      waiting = null;
      resolve(status);
    }
  });
  socket.on('close', () => waiting?.(null));
  return {
    send(head, body) {
      return new Promise((resolve) => {
        waiting = resolve;
        socket.write(head.replace(/\n/g, '\r\n') + '\r\n');
        if (body) socket.write(body);
      });
    },
    close: () => socket.destroy(),
  };
}
