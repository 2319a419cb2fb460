import { setMaxListeners } from 'node:events';
import { mkdir, realpath } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createFrontDoor } from '../protocol/front-door.js';
import type { Handler } from '../protocol/http.js';
import { InFlight } from '../protocol/in-flight.js';
import { requestInProcess, type InProcessInit, type InProcessResponse } from '../protocol/in-process.js';
import { createOpenApiRoute } from '../protocol/openapi.js';
import { TokenScopes } from '../protocol/token-scopes.js';
import { createForwarder, type Forwarder } from '../protocol/target-forwarder.js';
import { JobRegistry } from '../core/registry.js';
import { isLoopbackHost } from '../core/loopback.js';
import { JsonLinesFile } from '../supervisor/common/json-lines-file.js';
import { resolveScopedTokens } from '../supervisor/common/scoped-tokens.js';
import { STATE_DIR } from '../supervisor/common/token-store.js';
import type { Config } from '../supervisor/common/config.js';
import { openStateDirForRunAs, resolveRunAs } from '../supervisor/common/run-as.js';
import { ServiceMetrics } from '../supervisor/metrics/service-metrics.js';
import { WorkerPool } from '../workers/pool.js';
import type { Environment } from './capability-contract.js';
import type { AppCapability, AppCapabilityEntry } from './app-capability.js';
import { composeCapabilities, type Composed } from './compose-capabilities.js';
import { DEFAULT_CAPABILITIES } from './default-capabilities.js';

export interface AppOptions {
  config: Config;
  /** The bearer token, or null for an open service (only `requires_auth=false` Jobs are public). */
  token: string | null;
  capabilities?: readonly AppCapabilityEntry[];
}

/** The service's behaviour without a socket: the registry, the routes, and calls through them. */
export interface App {
  readonly workspace: string;
  readonly registry: JobRegistry;
  /** The front door (auth, routes, Jobs), counting the requests in flight: what a server listens with. */
  readonly handler: Handler;
  /** Runs one request through the routes in this process, without a socket (like hono's `app.request()`). */
  request(init: InProcessInit): Promise<InProcessResponse>;
  /** Ends open SSE streams with a failed result and gives in-flight calls a bounded moment to finish. */
  drain(): Promise<void>;
  /** Drains, then stops every capability; harmless to call twice. */
  close(): Promise<void>;
}

/** How long a stopping service lets in-flight calls finish before it drops their connections. */
const DRAIN_MS = 2_000;

/** The workspace root as every capability sees it: made if missing, its real path. */
export async function workspaceOf(config: Config): Promise<string> {
  await mkdir(config.service.workspace, { recursive: true });
  return realpath(config.service.workspace);
}

/**
 * Builds every capability and fixes the catalog. It neither takes the workspace's lock nor
 * listens: `startService` does both around it; a caller in process that builds an app on a
 * workspace must be the only one using it.
 */
export async function createApp(opts: AppOptions): Promise<App> {
  const { config } = opts;
  const runAs = resolveRunAs(config);
  const workspace = await workspaceOf(config);
  const shutdown = new AbortController();
  const stopping = new AbortController();
  // Every open SSE stream listens for the stop: any number of them is expected.
  setMaxListeners(0, stopping.signal);
  const pool = new WorkerPool();
  const metrics = new ServiceMetrics();
  const env: Environment = { config, workspace, pool, shutdown: shutdown.signal, token: opts.token, metrics, runAs };
  let composed: Composed<AppCapability> | undefined;
  let forwarder: Forwarder | undefined;
  let audit: JsonLinesFile | undefined;
  const closeAll = async () => {
    shutdown.abort();
    forwarder?.close();
    await composed?.close();
    await audit?.close();
    await pool.close();
  };
  try {
    await openStateDirForRunAs(workspace, runAs);
    forwarder = createForwarder(config.targets);
    const scopedTokens = resolveScopedTokens(config.service.tokens, process.cwd());
    audit = await JsonLinesFile.open(resolve(workspace, config.audit.path ?? join(STATE_DIR, 'audit.jsonl')), config.audit.max_bytes, config.audit.keep);
    composed = await composeCapabilities(opts.capabilities ?? DEFAULT_CAPABILITIES, env);
    const { capabilities } = composed;
    const registry = new JobRegistry(capabilities.flatMap((c) => c.jobs), config.jobs, opts.token !== null, metrics.observeJobCall, audit.append);
    for (const c of capabilities) c.attach?.(registry);
    const inFlight = new InFlight();
    const handler = inFlight.wrap(
      createFrontDoor({
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
      }),
    );
    let drained: Promise<void> | undefined;
    const drain = () =>
      (drained ??= (async () => {
        stopping.abort();
        await inFlight.settled(DRAIN_MS);
      })());
    let closed: Promise<void> | undefined;
    return {
      workspace,
      registry,
      handler,
      request: (init) => requestInProcess(handler, init),
      drain,
      close: () =>
        (closed ??= (async () => {
          await drain();
          await closeAll();
        })()),
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
