import { setMaxListeners } from 'node:events';
import { mkdir, realpath } from 'node:fs/promises';
import { createFrontDoor } from '../protocol/front-door.js';
import type { HttpAdapter } from '../protocol/http.js';
import { chooseAdapter } from '../protocol/adapter.js';
import { InFlight } from '../protocol/in-flight.js';
import { requestInProcess, type InProcessInit, type InProcessResponse } from '../protocol/in-process.js';
import { createOpenApiRoute } from '../protocol/openapi.js';
import { TokenScopes } from '../protocol/token-scopes.js';
import { JsonLinesFile } from '../supervisor/common/json-lines-file.js';
import { resolveScopedTokens } from '../supervisor/common/scoped-tokens.js';
import { STATE_DIR } from '../supervisor/common/token-store.js';
import { join, resolve } from 'node:path';
import { WorkerPool } from '../workers/pool.js';
import type { Environment } from './capability-contract.js';
import type { AppCapability, AppCapabilityFactory } from './app-capability.js';
import { DEFAULT_CAPABILITIES } from './default-capabilities.js';
import type { Config } from '../supervisor/common/config.js';
import { createForwarder, type Forwarder } from '../protocol/target-forwarder.js';
import { JobRegistry } from '../core/registry.js';
import { isLoopbackHost } from '../core/loopback.js';
import { lockWorkspace } from '../supervisor/common/workspace-lock.js';
import { ServiceMetrics } from '../supervisor/metrics/service-metrics.js';
import { openStateDirForRunAs, resolveRunAs } from '../supervisor/common/run-as.js';

export interface ServiceOptions {
  config: Config;
  /** The bearer token, or null for an open service (only `requires_auth=false` Jobs are public). */
  token: string | null;
  adapter?: HttpAdapter;
  capabilities?: readonly AppCapabilityFactory[];
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

/** How long a stopping service lets in-flight calls finish before it drops their connections. */
const DRAIN_MS = 2_000;

/** Builds every capability, fixes the catalog, and starts listening. */
export async function startService(opts: ServiceOptions): Promise<RunningService> {
  const { config } = opts;
  const runAs = resolveRunAs(config);
  await mkdir(config.service.workspace, { recursive: true });
  const workspace = await realpath(config.service.workspace);
  // One service per workspace, taken before anything reads or settles its records.
  const lock = await lockWorkspace(workspace);
  const shutdown = new AbortController();
  const stopping = new AbortController();
  // Every open SSE stream listens for the stop: any number of them is expected.
  setMaxListeners(0, stopping.signal);
  const pool = new WorkerPool();
  const metrics = new ServiceMetrics();
  const env: Environment = { config, workspace, pool, shutdown: shutdown.signal, token: opts.token, metrics, runAs };
  const capabilities: AppCapability[] = [];
  let forwarder: Forwarder | undefined;
  let audit: JsonLinesFile | undefined;
  const closeAll = async () => {
    shutdown.abort();
    forwarder?.close();
    for (const c of capabilities.reverse()) await c.close?.();
    await audit?.close();
    await pool.close();
    await lock.release();
  };
  try {
    await openStateDirForRunAs(workspace, runAs);
    forwarder = createForwarder(config.targets);
    const scopedTokens = resolveScopedTokens(config.service.tokens, process.cwd());
    audit = await JsonLinesFile.open(resolve(workspace, config.audit.path ?? join(STATE_DIR, 'audit.jsonl')), config.audit.max_bytes, config.audit.keep);
    for (const factory of opts.capabilities ?? DEFAULT_CAPABILITIES) capabilities.push(await factory(env));
    const registry = new JobRegistry(capabilities.flatMap((c) => c.jobs), config.jobs, opts.token !== null, metrics.observeJobCall, audit.append);
    for (const c of capabilities) c.attach?.(registry);
    const handler = createFrontDoor({
      registry,
      forwarder,
      scopes: new TokenScopes(registry, opts.token, scopedTokens),
      jsonLimit: config.service.json_body_limit_bytes,
      shutdown: shutdown.signal,
      stopping: stopping.signal,
      loopbackOnly: isLoopbackHost(config.service.host),
      allowedOrigins: config.service.allowed_origins,
      mcpProgressIntervalMs: config.service.mcp_progress_interval_ms,
      routes: [...capabilities.flatMap((c) => c.routes ?? []), createOpenApiRoute(registry, opts.token !== null)],
    });
    const adapter = opts.adapter ?? chooseAdapter();
    const inFlight = new InFlight();
    const counted = inFlight.wrap(handler);
    const server = await adapter.listen(config.service.host, config.service.port, counted);
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
      request: (init) => requestInProcess(counted, init),
      close: () =>
        (closed ??= (async () => {
          // Stop accepting, end open SSE streams with a failed result, give in-flight calls a
          // bounded moment, then drop every connection (idle keep-alive ones included).
          server.stopAccepting();
          stopping.abort();
          await inFlight.settled(DRAIN_MS);
          await server.close();
          await closeAll();
        })()),
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
