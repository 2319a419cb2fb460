import { HttpError, invalidToken, unknownJob } from '../core/errors.js';
import type { Forwarder } from './target-forwarder.js';
import type { JobRegistry } from '../core/registry.js';
import { isProtectedPath } from './auth.js';
import { crossSiteGuard, isJsonBody } from './cross-site-guard.js';
import { checkFilesScope, rememberCaller, TokenScopes, type Caller } from './token-scopes.js';
import type { Handler, IncomingRequest, ResponseSink } from './http.js';
import { handleCall, handleCatalog, handleEvents, type JobRoutesOptions } from './job-routes.js';
import { JSON_HEADERS, sendError, sendJson } from './reply.js';
import { matchesPrefix, type Route } from './route.js';

export interface FrontDoorOptions {
  registry: JobRegistry;
  forwarder: Forwarder;
  /** The bearer tokens accepted, and what each may call. */
  scopes: TokenScopes;
  jsonLimit: number;
  shutdown: AbortSignal;
  /** Aborted when the service starts to stop (before `shutdown`): SSE streams end then. */
  stopping: AbortSignal;
  /** Whether the service listens on loopback only; then every request's Host must name loopback too. */
  loopbackOnly: boolean;
  /** Browser origins besides loopback ones (and the service's own) that may call any route. */
  allowedOrigins: readonly string[];
  /** With an MCP progress token, the longest silence between progress notifications. */
  mcpProgressIntervalMs: number;
  /** Further routes (`/files`, `/proxy`, the console), tried in order after the Job routes. */
  routes: readonly Route[];
}

const CORS_PREFLIGHT = {
  allow: 'GET, POST, DELETE, OPTIONS',
  'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
  'access-control-allow-headers': 'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, x-file-name, x-file-directory',
};

function methodNotAllowed(allowed: string): HttpError {
  return new HttpError(405, `Method not allowed; use ${allowed}`);
}

const isMcpPath = (path: string) => path === '/mcp' || path === '/mcp/';

/** 403 for a request from another site: `{detail}`, or a JSON-RPC error at `/mcp` as its clients expect. */
function sendCrossSite(res: ResponseSink, path: string, problem: string): void {
  if (isMcpPath(path)) return sendJson(res, 403, { jsonrpc: '2.0', error: { code: JSONRPC_INVALID_REQUEST, message: problem }, id: null });
  sendError(res, new HttpError(403, problem));
}

/** JSON-RPC's Invalid Request code (the MCP SDK's ErrorCode.InvalidRequest, which loads with MCP only). */
const JSONRPC_INVALID_REQUEST = -32600;

/** Without a token, a Job call in a body type another site's page can send without a preflight. */
const crossSiteBody = () =>
  new HttpError(415, 'Unsupported Media Type: a Job call needs Content-Type application/json (a service without a token refuses the types a web page can send from another site)');

/** The same request seen under another path (getters such as `signal` stay live). */
function withPath(req: IncomingRequest, path: string): IncomingRequest {
  // rawPath keeps the spelling as received, for the proxy to forward unchanged.
  return Object.create(req, { path: { value: path, enumerable: true }, rawPath: { value: req.path, enumerable: true } }) as IncomingRequest;
}

/**
 * The one request handler: decodes the path, refuses other sites' requests (Origin, Host), applies
 * the bearer rule by path, then routes.
 * Auth and routing read the same decoded path, so an encoded spelling cannot slip past one of them.
 */
export function createFrontDoor(opts: FrontDoorOptions): Handler {
  const crossSite = crossSiteGuard(opts.loopbackOnly, opts.allowedOrigins);
  const jobOpts: JobRoutesOptions = { forwarder: opts.forwarder, jsonLimit: opts.jsonLimit, shutdown: opts.shutdown, stopping: opts.stopping };
  // The MCP layer and its SDK (~200 ms of CPU to load) come with the first `/mcp` request, so a
  // start (and every CLI or test process that starts a service) does not pay for them.
  let mcp: Promise<(req: IncomingRequest, res: ResponseSink, caller: Caller) => Promise<void>> | undefined;
  const handleMcp = async (req: IncomingRequest, res: ResponseSink, caller: Caller) => {
    mcp ??= Promise.all([import('./mcp.js'), import('./mcp-tasks.js')]).then(([{ createMcpHandler }, { McpTasks }]) =>
      createMcpHandler({ registry: opts.registry, jsonLimit: opts.jsonLimit, shutdown: opts.shutdown, progressIntervalMs: opts.mcpProgressIntervalMs, tasks: new McpTasks(opts.registry, opts.shutdown) }),
    );
    return (await mcp)(req, res, caller);
  };

  const findRoute = (path: string) => opts.routes.find((r) => r.prefix !== '/' && matchesPrefix(path, r.prefix)) ?? opts.routes.find((r) => r.prefix === '/');
  const HEALTH = JSON.stringify({ answer: { running: true }, success: true, metadata: {} });

  async function route(req: IncomingRequest, res: ResponseSink): Promise<void> {
    const { path, method } = req;
    if (method === 'OPTIONS' && !path.startsWith('/proxy/')) {
      // Spec, Authentication 2: OPTIONS skips the check; answer preflights without running anything.
      res.send(204, CORS_PREFLIGHT);
      return;
    }
    let caller: Caller | null = null;
    if (isProtectedPath(path) && !(caller = opts.scopes.identify(req.headers))) throw invalidToken();

    if (path === '/health' || path === '/health/') {
      if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed('GET');
      return res.send(200, JSON_HEADERS, HEALTH);
    }
    if (path === '/jobs' || path === '/jobs/') {
      if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed('GET');
      return handleCatalog(req, res, caller!, jobOpts);
    }
    const job = /^\/jobs\/([^/]+)(\/events)?\/?$/.exec(path);
    if (job) {
      if (method !== 'POST') throw methodNotAllowed('POST');
      if (opts.scopes.open && !isJsonBody(req.headers)) throw crossSiteBody();
      const name = job[1]!;
      return job[2] ? handleEvents(req, res, name, caller!, jobOpts) : handleCall(req, res, name, caller!, jobOpts);
    }
    if (path.startsWith('/jobs/')) throw unknownJob();
    if (isMcpPath(path)) return handleMcp(req, res, caller!);
    if (caller && !caller.unrestricted && (path === '/files' || path.startsWith('/files/'))) checkFilesScope(caller, method);
    const handler = findRoute(path);
    if (caller) rememberCaller(req, caller);
    if (handler) return handler.handle(req, res);
    throw new HttpError(404, 'Not found');
  }

  return async (req, res) => {
    let decoded = req;
    if (req.path.includes('%')) {
      try {
        decoded = withPath(req, decodeURIComponent(req.path));
      } catch {
        return sendError(res, new HttpError(400, 'Malformed percent-encoding in path'));
      }
    }
    if (decoded.path.includes('\0')) return sendError(res, new HttpError(400, 'NUL byte in path'));
    // Before anything else, the token and OPTIONS included: another site's page learns nothing.
    const problem = crossSite(req.headers);
    if (problem) return sendCrossSite(res, decoded.path, problem);
    try {
      await route(decoded, res);
    } catch (err) {
      sendError(res, err);
    }
  };
}
