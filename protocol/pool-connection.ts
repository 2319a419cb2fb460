// One pooled connection to an origin (its socket and how it reads) and the batched writes of
// requests onto such connections.
import { connect as connectTcp, type Socket } from 'node:net';
import { lazyBuiltin } from '../core/lazy-builtin.js';

/** Loaded with the first TLS origin: most forwarding is plain TCP on a private network. */
const tls = lazyBuiltin<typeof import('node:tls')>('node:tls');

/** The exchange a connection is carrying, as its socket events see it. */
export interface Carried {
  data(chunk: Buffer): void;
  closed(): void;
}

/** The most one read of a plain TCP connection takes. */
const READ_SIZE = 64 * 1024;
/**
 * Where plain TCP connections read into: the bytes are copied out before the read callback
 * returns, so one buffer serves every connection (reads run one at a time on this thread).
 */
const READ_BUFFER = Buffer.allocUnsafeSlow(READ_SIZE);

/** A socket and what it carries now (nothing while idle: stray bytes then drop it). */
export class Connection {
  carried: Carried | undefined;
  failure: Error | undefined;
  served = 0;
  /** When it was last parked idle (performance.now()). */
  idleSince = 0;
  readonly socket: Socket;

  /**
   * `origin` is plain TCP or TLS. TCP reads straight into READ_BUFFER (net's `onread`), skipping
   * the stream machinery's per-read work (push, 'data', a nextTick to read more), which cost a
   * forwarded call more than framing its answer; TLS has no such option and reads as a stream.
   * After a read that filled its buffer (a large body is arriving), the next read goes into a
   * buffer of its own, handed on without the copy: copying cost a large forwarded answer more
   * than checking it. A short read goes back to the shared buffer, so small answers never hold
   * a whole read buffer each.
   */
  constructor(origin: { host: string; port: number; tls: boolean }) {
    const received = (chunk: Buffer) => (this.carried ? this.carried.data(chunk) : this.socket.destroy());
    if (origin.tls) {
      this.socket = tls().connect({ host: origin.host, port: origin.port, servername: origin.host, ALPNProtocols: ['http/1.1'] });
      this.socket.on('data', received);
    } else {
      let bulk = false;
      const callback = (n: number, into: Uint8Array): boolean => {
        let chunk: Buffer;
        if (into === READ_BUFFER) {
          chunk = Buffer.allocUnsafe(n);
          READ_BUFFER.copy(chunk, 0, 0, n);
        } else chunk = (into as Buffer).subarray(0, n);
        bulk = n === READ_SIZE;
        received(chunk);
        return true; // false would pause the socket
      };
      // Asked for the buffer of each next read.
      const buffer = (): Buffer => (bulk ? Buffer.allocUnsafe(READ_SIZE) : READ_BUFFER);
      this.socket = connectTcp({ host: origin.host, port: origin.port, onread: { buffer, callback } });
    }
    this.socket.on('error', (err) => (this.failure = err));
    this.socket.on('close', () => this.carried?.closed());
  }
}

/**
 * Requests made during one turn of the event loop, written together once the turn's I/O is
 * handled (setImmediate runs after the poll phase): a target then wakes once for the batch
 * instead of once per request, and this service finishes its turn before the target competes
 * with it for a core (forwarded, a target spent 38 µs of CPU per `version` call against 27 µs
 * called directly; batched, the same as direct).
 */
let outbox: Array<[Socket, string]> = [];

function flush(): void {
  const batch = outbox;
  outbox = [];
  for (const [socket, bytes] of batch) if (!socket.destroyed) socket.write(bytes);
}

/** Writes `bytes` on `socket` once this turn of the event loop has handled its I/O; a socket destroyed by then gets nothing. */
export function writeSoon(socket: Socket, bytes: string): void {
  if (outbox.length === 0) setImmediate(flush);
  outbox.push([socket, bytes]);
}
