import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BodyWriter, Handler, HeaderMap, HttpAdapter, IncomingRequest, ListeningServer, ResponseHeaders, ResponseSink } from './http.js';
import { hookOf } from './abort-hook.js';
import type { SharedBodyWriter } from './shared-body-writer.js';
import { lazyBuiltin } from '../core/lazy-builtin.js';

/** Loaded when this front end listens: a service on uWS never needs node:http. */
const http = lazyBuiltin<typeof import('node:http')>('node:http');

/** Fallback front end on node:http with the same seam as the uWS adapter. */
class NodeResponse implements ResponseSink {
  constructor(private readonly res: ServerResponse) {}

  get #gone(): boolean {
    return this.res.writableEnded || this.res.destroyed;
  }

  send(status: number, headers: ResponseHeaders, body: string | Uint8Array = ''): void {
    if (this.#gone || this.res.headersSent) return;
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    this.res.writeHead(status, { ...headers, 'content-length': String(bytes.byteLength) });
    this.res.end(bytes);
  }

  /** Resolves once the socket drained its buffer, or closed. */
  #drained(): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }

  stream(status: number, headers: ResponseHeaders): BodyWriter {
    if (!this.#gone) {
      this.res.writeHead(status, headers);
      this.res.flushHeaders();
    }
    const length = headers['content-length'];
    if (typeof length === 'string' && /^\d+$/.test(length)) return this.#sized();
    const chunked: SharedBodyWriter = {
      write: async (chunk) => {
        if (this.#gone) return false;
        if (!this.res.write(chunk)) await this.#drained();
        return !this.#gone;
      },
      writeShared: (chunk) => {
        if (this.#gone) return false;
        return this.res.write(chunk) || this.#drained().then(() => !this.#gone);
      },
      // The lead (StreamOptions) needs nothing here: node:http sends a chunk's closing CRLF with it.
      end: (last) => {
        if (!this.#gone) this.res.end(last);
      },
      abort: () => {
        if (!this.#gone) this.res.destroy();
      },
    };
    return chunked;
  }

  /**
   * A body of known length (a file download): each write resolves once the socket took the whole
   * chunk, so the caller may reuse its memory for the next one.
   */
  #sized(): BodyWriter {
    return {
      write: (chunk) =>
        new Promise<boolean>((resolve) => {
          if (this.#gone) return resolve(false);
          // A destroyed response may never call the write callback: its close settles the write.
          const done = () => {
            this.res.off('close', done);
            resolve(!this.#gone);
          };
          this.res.on('close', done);
          this.res.write(chunk, done);
        }),
      end: () => {
        if (!this.#gone) this.res.end();
      },
      abort: () => {
        if (!this.#gone) this.res.destroy();
      },
    };
  }
}

function toRequest(req: IncomingMessage, res: ServerResponse): IncomingRequest {
  const controller = new AbortController();
  // 'close' on the response fires after a normal finish too; only an unfinished one is an abort.
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  const headers: HeaderMap = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return {
    method: (req.method ?? 'GET').toUpperCase(),
    path: q === -1 ? url : url.slice(0, q),
    query: q === -1 ? '' : url.slice(q + 1),
    headers,
    signal: controller.signal,
    gone: hookOf(controller.signal),
    body: () => req as AsyncIterable<Uint8Array>,
  };
}

export const nodeAdapter: HttpAdapter = {
  name: 'node',
  listen(host: string, port: number, handler: Handler): Promise<ListeningServer> {
    const server = http().createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
      const sink = new NodeResponse(res);
      handler(toRequest(req, res), sink).catch((err: unknown) => {
        console.error('taskyard: unhandled error in request handler', err);
        sink.send(500, { 'content-type': 'application/json' }, JSON.stringify({ detail: 'Internal server error' }));
      });
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve({
          port: (server.address() as AddressInfo).port,
          adapter: 'node',
          stopAccepting: () => {
            if (server.listening) server.close();
          },
          close: () =>
            new Promise<void>((done) => {
              if (server.listening) server.close(() => done());
              else done();
              server.closeAllConnections();
            }),
        });
      });
    });
  },
};
