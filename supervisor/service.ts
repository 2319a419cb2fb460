import { mkdir, realpath } from 'node:fs/promises';
import { createFrontDoor } from '../protocol/front-door.js';
import type { HttpAdapter } from '../protocol/http.js';
import { chooseAdapter } from '../protocol/adapter.js';
import { buildOpenApi, createOpenApiRoute } from '../protocol/openapi.js';
import { WorkerPool } from '../workers/pool.js';
import type { Capability, CapabilityFactory, Environment } from './capability.js';
import { DEFAULT_CAPABILITIES } from './capabilities.js';
import type { Config } from './config.js';
import { createForwarder } from './forward.js';
import { ServiceMetrics } from './metrics/service-metrics.js';
import { JobRegistry } from './registry.js';
import { lockWorkspace } from './workspace-lock.js';

export interface ServiceOptions {
  config: Config;
  /** The bearer token, or null for an open service (only `requires_auth=false` Jobs are public). */
  token: string | null;
  adapter?: HttpAdapter;
  capabilities?: readonly CapabilityFactory[];
}

export interface RunningService {
  readonly url: string;
  readonly port: number;
  readonly adapter: 'uws' | 'node';
  readonly workspace: string;
  readonly registry: JobRegistry;
  close(): Promise<void>;
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|::1|\[::1\])$/i;

/** Builds every capability, fixes the catalog, and starts listening. */
export async function startService(opts: ServiceOptions): Promise<RunningService> {
  const { config } = opts;
  await mkdir(config.service.workspace, { recursive: true });
  const workspace = await realpath(config.service.workspace);
  // One service per workspace, taken before anything reads or settles its records.
  const lock = await lockWorkspace(workspace);
  const shutdown = new AbortController();
  const pool = new WorkerPool();
  const metrics = new ServiceMetrics();
  const env: Environment = { config, workspace, pool, shutdown: shutdown.signal, token: opts.token, metrics };
  const capabilities: Capability[] = [];
  const closeAll = async () => {
    shutdown.abort();
    for (const c of capabilities.reverse()) await c.close?.();
    await pool.close();
    await lock.release();
  };
  try {
    const forwarder = createForwarder(config.targets);
    for (const factory of opts.capabilities ?? DEFAULT_CAPABILITIES) capabilities.push(await factory(env));
    const registry = new JobRegistry(capabilities.flatMap((c) => c.jobs), config.jobs, opts.token !== null, metrics.observeJobCall);
    const handler = createFrontDoor({
      registry,
      forwarder,
      token: opts.token,
      jsonLimit: config.service.json_body_limit_bytes,
      shutdown: shutdown.signal,
      loopbackOnly: LOOPBACK.test(config.service.host),
      allowedOrigins: config.service.allowed_origins,
      routes: [...capabilities.flatMap((c) => c.routes ?? []), createOpenApiRoute(buildOpenApi(registry, opts.token !== null))],
    });
    const adapter = opts.adapter ?? chooseAdapter();
    const server = await adapter.listen(config.service.host, config.service.port, handler);
    const host = config.service.host.includes(':') ? `[${config.service.host}]` : config.service.host;
    const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${server.port}`;
    await lock.setAddress(url);
    // Closing twice must be harmless: a second close of the uWS listen socket crashes the process.
    let closed: Promise<void> | undefined;
    return {
      url,
      port: server.port,
      adapter: server.adapter,
      workspace,
      registry,
      close: () =>
        (closed ??= (async () => {
          await server.close();
          await closeAll();
        })()),
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
