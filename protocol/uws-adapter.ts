import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { HttpResponse, TemplatedApp, us_listen_socket } from '@trufflesuite/uws-js-unofficial';
import { BodyQueue } from './body-queue.js';
import { statusLine, type BodyWriter, type Handler, type HeaderMap, type HttpAdapter, type IncomingRequest, type ListeningServer, type ResponseSink } from './http.js';

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

const EMPTY_BODY: AsyncIterable<Uint8Array> = { [Symbol.asyncIterator]: async function* () {} };

function hasBody(headers: HeaderMap): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

class UwsResponse implements ResponseSink {
  aborted = false;
  /** True once the client went away (as opposed to the response being finished). */
  disconnected = false;
  #controller: AbortController | null = null;
  #drained: (() => void) | null = null;

  constructor(private readonly res: HttpResponse) {}

  /** Created on first use: most requests never look at their abort signal. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.disconnected) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  onAborted(): void {
    this.aborted = true;
    this.disconnected = true;
    this.#controller?.abort();
    this.#drained?.();
  }

  #head(status: number, headers: HeaderMap): boolean {
    this.res.writeStatus(statusLine(status));
    let close = false;
    for (const [name, value] of Object.entries(headers)) {
      // uWS writes content-length itself on end(); a second one would corrupt the response.
      if (name === 'content-length') continue;
      if (name === 'connection' && value === 'close') close = true;
      else this.res.writeHeader(name, value);
    }
    return close;
  }

  send(status: number, headers: HeaderMap, body: string | Uint8Array = ''): void {
    if (this.aborted) return;
    this.aborted = true; // a response is finished once; later calls are ignored
    this.res.cork(() => {
      const close = this.#head(status, headers);
      this.res.end(body, close);
    });
  }

  stream(status: number, headers: HeaderMap): BodyWriter {
    if (!this.aborted) this.res.cork(() => this.#head(status, headers));
    return {
      write: async (chunk) => {
        if (this.aborted) return false;
        // Not corked: a corked write that reports backpressure is sometimes never followed by
        // onWritable (measured with this uWS build), which would stall the stream forever.
        const ok = this.res.write(chunk);
        if (!ok && !this.aborted) {
          // Backpressure: uWS has buffered the chunk; wait until the socket drains.
          await new Promise<void>((resolve) => {
            this.#drained = resolve;
            this.res.onWritable(() => {
              this.#drained = null;
              resolve();
              return true;
            });
          });
        }
        return !this.aborted;
      },
      end: () => {
        if (this.aborted) return;
        this.aborted = true;
        this.res.cork(() => this.res.end());
      },
    };
  }
}

export const uwsAdapter = (uws: UwsModule): HttpAdapter => ({
  name: 'uws',
  listen(host: string, port: number, handler: Handler): Promise<ListeningServer> {
    const app: TemplatedApp = uws.App();
    app.any('/*', (res, req) => {
      // Read everything from `req` now: it is invalid after this callback returns.
      const headers: HeaderMap = {};
      req.forEach((name, value) => {
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
      });
      const sink = new UwsResponse(res);
      res.onAborted(() => {
        sink.onAborted();
        queue?.fail(new Error('client disconnected'));
      });
      let queue: BodyQueue | null = null;
      if (hasBody(headers)) {
        queue = new BodyQueue(() => res.pause(), () => res.resume());
        const q = queue;
        // uWS reuses the chunk's memory after the callback: copy it.
        res.onData((chunk, last) => q.push(new Uint8Array(chunk.slice(0)), last));
      }
      const request: IncomingRequest = {
        method: req.getMethod().toUpperCase(),
        path: req.getUrl(),
        query: req.getQuery() ?? '',
        headers,
        get signal() {
          return sink.signal;
        },
        body: () => queue ?? EMPTY_BODY,
      };
      handler(request, sink).catch((err: unknown) => {
        console.error('taskyard: unhandled error in request handler', err);
        sink.send(500, { 'content-type': 'application/json' }, JSON.stringify({ detail: 'Internal server error' }));
      });
    });
    return new Promise((resolve, reject) => {
      app.listen(host, port, (socket: us_listen_socket | false) => {
        if (!socket) return reject(new Error(`cannot listen on ${host}:${port} (address in use or not available)`));
        resolve({
          port: uws.us_socket_local_port(socket as unknown as Parameters<UwsModule['us_socket_local_port']>[0]),
          adapter: 'uws',
          close: async () => uws.us_listen_socket_close(socket),
        });
      });
    });
  },
});
