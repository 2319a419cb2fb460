import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { JobResponse } from '../schemas/job-response.js';
import { describeIssues } from '../schemas/validator.js';
import { PACKAGE_VERSION } from '../supervisor/build-info.js';
import { HttpError } from '../supervisor/errors.js';
import { createJobContext } from '../supervisor/job.js';
import type { JobRegistry } from '../supervisor/registry.js';
import type { HeaderMap, IncomingRequest, ResponseSink } from './http.js';
import { parseJson, readBody } from './json-body.js';
import { NO_RESULT } from './job-routes.js';
import { sendJson } from './reply.js';

export interface McpOptions {
  registry: JobRegistry;
  jsonLimit: number;
  shutdown: AbortSignal;
  /** Whether the service listens on loopback only; then the Host header must name loopback too. */
  loopbackOnly: boolean;
  allowedOrigins: readonly string[];
}

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i;

function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOST.test(url.host);
  } catch {
    return false;
  }
}

/** Guards against DNS rebinding: a page on another site must not reach a loopback service. */
function rebindingProblem(req: IncomingRequest, opts: McpOptions): string | undefined {
  const origin = req.headers['origin'];
  if (origin !== undefined && !isLoopbackOrigin(origin) && !opts.allowedOrigins.includes(origin)) return `Origin not allowed: ${origin}`;
  const host = req.headers['host'];
  if (opts.loopbackOnly && host !== undefined && !LOOPBACK_HOST.test(host)) return `Host not allowed: ${host}`;
  return undefined;
}

function rpcError(res: ResponseSink, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}

/** A fresh low-level MCP server whose two handlers are fed by the Job registry. */
function buildServer(opts: McpOptions): Server {
  const server = new Server({ name: 'taskyard', version: PACKAGE_VERSION }, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: opts.registry.list().map(({ job }) => ({
      name: job.name,
      description: job.description,
      inputSchema: job.input as unknown as { type: 'object' },
      outputSchema: JobResponse as unknown as { type: 'object' },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const entry = opts.registry.get(request.params.name);
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    let args: unknown;
    try {
      args = opts.registry.prepare(entry, request.params.arguments ?? {});
    } catch (err) {
      if (err instanceof HttpError && Array.isArray(err.detail)) {
        throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for ${entry.job.name}: ${describeIssues(err.detail)}`);
      }
      throw err;
    }
    const ctx = createJobContext(() => [extra.signal, opts.shutdown], false, () => Promise.resolve());
    const response = (await opts.registry.execute(entry, args, ctx)) ?? NO_RESULT;
    return {
      content: [{ type: 'text' as const, text: JSON.stringify(response) }],
      structuredContent: response,
      isError: !response.success,
    };
  });
  return server;
}

/**
 * Streamable HTTP at `/mcp`, stateless: each POST gets its own server and transport, bridged from
 * our request seam onto the SDK's web-standard transport. GET (the optional server-initiated
 * stream) and DELETE (session end) have no meaning without sessions: 405.
 */
export async function handleMcp(req: IncomingRequest, res: ResponseSink, opts: McpOptions): Promise<void> {
  const problem = rebindingProblem(req, opts);
  if (problem) return rpcError(res, 403, ErrorCode.InvalidRequest, problem);
  if (req.method !== 'POST') {
    res.send(405, { allow: 'POST, OPTIONS', 'content-type': 'application/json' }, JSON.stringify({ jsonrpc: '2.0', error: { code: ErrorCode.ConnectionClosed, message: 'Method not allowed: this server is stateless and only accepts POST' }, id: null }));
    return;
  }
  let parsedBody: unknown;
  try {
    parsedBody = parseJson(await readBody(req, opts.jsonLimit));
  } catch (err) {
    if (err instanceof HttpError && err.status === 422) return rpcError(res, 400, ErrorCode.ParseError, 'Parse error: invalid JSON');
    throw err;
  }
  const server = buildServer(opts);
  const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
  try {
    await server.connect(transport);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) headers.set(name, value);
    const request = new Request(`http://${req.headers['host'] ?? 'localhost'}${req.path}`, { method: 'POST', headers, signal: req.signal });
    const response = await transport.handleRequest(request, { parsedBody });
    const out: HeaderMap = {};
    response.headers.forEach((value, name) => {
      if (name !== 'content-length' && name !== 'transfer-encoding') out[name] = value;
    });
    res.send(response.status, out, new Uint8Array(await response.arrayBuffer()));
  } finally {
    await server.close().catch(() => undefined);
  }
}
