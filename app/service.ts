import type { HttpAdapter } from '../protocol/http.js';
import { chooseAdapter } from '../protocol/adapter.js';
import type { InProcessInit, InProcessResponse } from '../protocol/in-process.js';
import type { JobRegistry } from '../core/registry.js';
import { lockWorkspace } from '../supervisor/common/workspace-lock.js';
import { createApp, workspaceOf, type App, type AppOptions } from './create-app.js';

export { createApp, type App, type AppOptions } from './create-app.js';

export interface ServiceOptions extends AppOptions {
  adapter?: HttpAdapter;
}

export interface RunningService {
  readonly url: string;
  readonly port: number;
  readonly adapter: 'uws' | 'node';
  readonly workspace: string;
  readonly registry: JobRegistry;
  /** Runs one request through the routes in this process, without a socket (like hono's `app.request()`). */
  request(init: InProcessInit): Promise<InProcessResponse>;
  close(): Promise<void>;
}

/** Takes the workspace's lock, builds the app on it (`createApp`), and starts listening. */
export async function startService(opts: ServiceOptions): Promise<RunningService> {
  const { config } = opts;
  // One service per workspace, taken before anything reads or settles its records.
  const lock = await lockWorkspace(await workspaceOf(config));
  let app: App | undefined;
  try {
    app = await createApp(opts);
    const server = await (opts.adapter ?? chooseAdapter()).listen(config.service.host, config.service.port, app.handler);
    const host = config.service.host.includes(':') ? `[${config.service.host}]` : config.service.host;
    const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${server.port}`;
    await lock.setAddress(url);
    const running = app;
    // Closing twice must be harmless: a second close of the uWS listen socket crashes the process.
    let closed: Promise<void> | undefined;
    return {
      url,
      port: server.port,
      adapter: server.adapter,
      workspace: running.workspace,
      registry: running.registry,
      request: running.request,
      close: () =>
        (closed ??= (async () => {
          // Stop accepting, end open SSE streams with a failed result, give in-flight calls a
          // bounded moment, then drop every connection (idle keep-alive ones included).
          server.stopAccepting();
          await running.drain();
          await server.close();
          await running.close();
          await lock.release();
        })()),
    };
  } catch (err) {
    await app?.close();
    await lock.release();
    throw err;
  }
}
