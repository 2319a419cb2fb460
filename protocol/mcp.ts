import { ErrorCode, isInitializeRequest, JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { HttpError } from '../core/errors.js';
import type { IncomingRequest, ResponseSink } from './http.js';
import { McpServerPool } from './mcp-server-pool.js';
import { answerPlainCall, plainToolCall } from './mcp-plain-call.js';
import type { McpToolsOptions } from './mcp-tools.js';
import { isTooManyValues, readJson, TOO_MANY_VALUES } from './json-body.js';
import { JSON_HEADERS, sendJson } from './reply.js';
import { SSE_HEADERS } from './sse.js';
import type { Caller } from './token-scopes.js';
import { baseUrlOf } from './mcp-resource-links.js';

/** Origin and Host are checked by the front door, for every route (protocol/cross-site-guard.ts). */
export interface McpOptions extends McpToolsOptions {
  jsonLimit: number;
}

/** Most messages one POST may carry (the SDK transport's limit). */
const MAX_BATCH = 100;

function rpcError(res: ResponseSink, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}

const unsupported = (version: string | undefined) => version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version);
const unsupportedVersion = (version: string) => `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`;

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
 * Streamable HTTP at `/mcp`, stateless: each POST is served by a low-level server connected to an
 * `McpExchange` (reused across POSTs), answered as JSON, or as SSE once a call sends progress.
 * GET (the optional server-initiated stream) and DELETE (session end) have no meaning without
 * sessions: 405. Header rules follow the SDK's transport.
 */
export function createMcpHandler(opts: McpOptions): (req: IncomingRequest, res: ResponseSink, caller: Caller) => Promise<void> {
  // One pool of servers per token: each server's tool list and handlers see that token's scope
  // (its registry view), fixed when the server is built, so a call costs the same for any token.
  const pools = new WeakMap<Caller, McpServerPool>();
  const poolOf = (caller: Caller) => {
    let pool = pools.get(caller);
    if (!pool) pools.set(caller, (pool = new McpServerPool({ ...opts, registry: caller.registry, caller: caller.tags.mcp })));
    return pool;
  };
  const endpoint: McpEndpoint = { opts, servers: poolOf };
  return (req, res, caller) => handleMcp(req, res, caller, endpoint);
}

/** What a POST to `/mcp` is served with. */
interface McpEndpoint {
  opts: McpOptions;
  servers: (caller: Caller) => McpServerPool;
}

async function handleMcp(req: IncomingRequest, res: ResponseSink, caller: Caller, { opts, servers: poolOf }: McpEndpoint): Promise<void> {
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
    body = await readJson(req, opts.jsonLimit);
  } catch (err) {
    if (isTooManyValues(err)) return rpcError(res, 400, ErrorCode.InvalidRequest, `Invalid Request: ${TOO_MANY_VALUES}`);
    if (err instanceof HttpError && err.status === 422) return rpcError(res, 400, ErrorCode.ParseError, 'Parse error: Invalid JSON');
    throw err;
  }
  const version = req.headers['mcp-protocol-version'];
  const plain = plainToolCall(body);
  if (plain) {
    if (unsupported(version)) return rpcError(res, 400, ErrorCode.ConnectionClosed, unsupportedVersion(version!));
    return res.send(200, JSON_HEADERS, await answerPlainCall(plain, caller.registry, () => [req.signal, opts.shutdown], caller.tags.mcp, baseUrlOf(req.headers)));
  }
  const read = readMessages(body);
  if (!read.ok) return rpcError(res, read.status, read.code, read.message);
  const { messages } = read;
  if (unsupported(version) && !messages.some(isInitializeRequest)) return rpcError(res, 400, ErrorCode.ConnectionClosed, unsupportedVersion(version!));
  const servers = poolOf(caller);
  const pooled = await servers.acquire();
  const outcome = await pooled.exchange.exchange(messages, { requestInfo: { headers: req.headers } }, req.signal, () => res.stream(200, { ...SSE_HEADERS }));
  servers.release(pooled);
  if (outcome.streamed) return;
  const { responses } = outcome;
  if (responses.length === 0) return res.send(202, {});
  sendJson(res, 200, Array.isArray(body) ? responses : responses[0]);
}
