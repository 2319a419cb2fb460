import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { CallToolRequestSchema, ErrorCode, isInitializeRequest, JSONRPCMessageSchema, ListToolsRequestSchema, McpError, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { JobResponse, plainAnswer } from '../schemas/job-response.js';
import { describeIssues } from '../schemas/validator.js';
import { PACKAGE_VERSION } from '../core/build-info.js';
import { HttpError } from '../core/errors.js';
import { createJobContext } from '../core/job.js';
import type { JobRegistry } from '../core/registry.js';
import type { IncomingRequest, ResponseSink } from './http.js';
import { McpExchange } from './mcp-exchange.js';
import { parseJson, readBody } from './json-body.js';
import { NO_RESULT } from './job-routes.js';
import { JSON_HEADERS, sendJson } from './reply.js';

export interface McpOptions {
  registry: JobRegistry;
  jsonLimit: number;
  shutdown: AbortSignal;
  /** Whether the service listens on loopback only; then the Host header must name loopback too. */
  loopbackOnly: boolean;
  allowedOrigins: readonly string[];
}

/** Most messages one POST may carry (the SDK transport's limit). */
const MAX_BATCH = 100;

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

// Shared by every per-request server: by default each Server builds its own ajv instance, which
// costs more than the whole tool call.
const schemaValidator = new AjvJsonSchemaValidator();

/**
 * A fresh low-level MCP server whose two handlers are fed by the Job registry. `callerGone` is the
 * HTTP request's abort: a caller that disconnects aborts its Jobs, as on the JSON and SSE routes.
 */
function buildServer(opts: McpOptions, callerGone: AbortSignal): Server {
  const server = new Server({ name: 'taskyard', version: PACKAGE_VERSION }, { capabilities: { tools: { listChanged: false } }, jsonSchemaValidator: schemaValidator });
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
    const ctx = createJobContext(() => [callerGone, extra.signal, opts.shutdown], false);
    const response = await plainAnswer((await opts.registry.execute(entry, args, ctx, 'mcp')) ?? NO_RESULT);
    return {
      content: [{ type: 'text' as const, text: JSON.stringify(response) }],
      structuredContent: response,
      isError: !response.success,
    };
  });
  return server;
}

type Messages = { ok: true; messages: JSONRPCMessage[] } | { ok: false; status: number; code: number; message: string };

/** Parses the body into JSON-RPC messages, or says why it cannot. */
function readMessages(body: unknown): Messages {
  const raw = Array.isArray(body) ? body : [body];
  if (raw.length === 0 || raw.length > MAX_BATCH) return { ok: false, status: 400, code: ErrorCode.InvalidRequest, message: `Invalid Request: a batch holds 1 to ${MAX_BATCH} messages` };
  const messages: JSONRPCMessage[] = [];
  for (const item of raw) {
    const parsed = JSONRPCMessageSchema.safeParse(item);
    if (!parsed.success) return { ok: false, status: 400, code: ErrorCode.ParseError, message: 'Parse error: Invalid JSON-RPC message' };
    messages.push(parsed.data);
  }
  return { ok: true, messages };
}

/**
 * Streamable HTTP at `/mcp`, stateless, answered as JSON: each POST gets its own low-level server
 * connected to an `McpExchange`. GET (the optional server-initiated stream) and DELETE (session
 * end) have no meaning without sessions: 405. Header rules follow the SDK's transport.
 */
export async function handleMcp(req: IncomingRequest, res: ResponseSink, opts: McpOptions): Promise<void> {
  const problem = rebindingProblem(req, opts);
  if (problem) return rpcError(res, 403, ErrorCode.InvalidRequest, problem);
  if (req.method !== 'POST') {
    res.send(405, { allow: 'POST, OPTIONS', ...JSON_HEADERS }, JSON.stringify({ jsonrpc: '2.0', error: { code: ErrorCode.ConnectionClosed, message: 'Method not allowed: this server is stateless and only accepts POST' }, id: null }));
    return;
  }
  const accept = req.headers['accept'] ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    return rpcError(res, 406, ErrorCode.ConnectionClosed, 'Not Acceptable: Client must accept both application/json and text/event-stream');
  }
  if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
    return rpcError(res, 415, ErrorCode.ConnectionClosed, 'Unsupported Media Type: Content-Type must be application/json');
  }
  let body: unknown;
  try {
    body = parseJson(await readBody(req, opts.jsonLimit));
  } catch (err) {
    if (err instanceof HttpError && err.status === 422) return rpcError(res, 400, ErrorCode.ParseError, 'Parse error: Invalid JSON');
    throw err;
  }
  const read = readMessages(body);
  if (!read.ok) return rpcError(res, read.status, read.code, read.message);
  const { messages } = read;
  const version = req.headers['mcp-protocol-version'];
  if (version !== undefined && !messages.some(isInitializeRequest) && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    return rpcError(res, 400, ErrorCode.ConnectionClosed, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
  }
  const server = buildServer(opts, req.signal);
  const exchange = new McpExchange();
  try {
    await server.connect(exchange);
    const responses = await exchange.exchange(messages, { requestInfo: { headers: req.headers } });
    if (responses.length === 0) return res.send(202, {});
    sendJson(res, 200, Array.isArray(body) ? responses : responses[0]);
  } finally {
    await server.close().catch(() => undefined);
  }
}
