import type { TemplatedApp, us_listen_socket } from '@trufflesuite/uws-js-unofficial';
import { ChunkPool } from './chunk-pool.js';
import type { Handler, HttpAdapter, ListeningServer } from './http.js';
import type { UwsModule } from './uws-native.js';
import { serveUws } from './uws-request.js';

/**
 * The uWebSockets.js front end: uws-request.ts reads each request, uws-response.ts answers it
 * (uws-chunked-body.ts and uws-sized-body.ts for streamed bodies), uws-native.ts loads the binary.
 */
export const uwsAdapter = (uws: UwsModule): HttpAdapter => ({
  name: 'uws',
  listen(host: string, port: number, handler: Handler): Promise<ListeningServer> {
    const app: TemplatedApp = uws.App();
    const chunks = new ChunkPool();
    app.any('/*', (res, req) => serveUws(res, req, handler, chunks));
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
