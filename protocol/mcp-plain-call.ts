import { ErrorCode, McpError, type JSONRPCError } from '@modelcontextprotocol/sdk/types.js';
import { isObject } from '../core/is-object.js';
import { createJobContext } from '../core/job.js';
import type { JobRegistry } from '../core/registry.js';
import type { CallerTag } from '../core/caller.js';
import { plainAnswer, responseJson, SerializedAnswer, StreamedAnswer, tailJson, type JobResponse } from '../schemas/job-response.js';
import { wireErrorMessage } from './mcp-exchange.js';
import { resolveCall, runTool } from './mcp-tools.js';
import { mayLink, resourceLinks } from './mcp-resource-links.js';

/** One `tools/call` that needs nothing of a session: no batch, no progress token, no MCP task. */
export interface PlainCall {
  id: string | number;
  name: string;
  arguments: Record<string, unknown> | undefined;
}

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAM_KEYS = new Set(['name', 'arguments', '_meta']);
const only = (o: Record<string, unknown>, keys: Set<string>) => Object.keys(o).every((k) => keys.has(k));

/**
 * The body as a plain tool call, or undefined for anything else (which the SDK's server answers).
 * This is the hot path of an MCP tool host: the SDK parses and dispatches every message through
 * its schemas, which costs several times a small call itself (bench/mcp.ts), so the one shape
 * that needs none of that is recognised here, strictly; any other key sends it the long way.
 */
export function plainToolCall(body: unknown): PlainCall | undefined {
  if (!isObject(body) || !only(body, REQUEST_KEYS) || body['jsonrpc'] !== '2.0' || body['method'] !== 'tools/call') return undefined;
  const { id, params } = body;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id))) || !isObject(params) || !only(params, PARAM_KEYS)) return undefined;
  const { name, arguments: args, _meta: meta } = params;
  if (typeof name !== 'string' || (args !== undefined && !isObject(args))) return undefined;
  if (meta !== undefined && (!isObject(meta) || Object.keys(meta).length > 0)) return undefined;
  return { id, name, arguments: args };
}

/** The tool result of a JobResponse's JSON text: the text block (escaped) and the structured content. */
const toolResultJson = (json: string, success: boolean, links = '') => `{"content":[{"type":"text","text":${JSON.stringify(json)}}${links}],"structuredContent":${json},"isError":${!success}}`;

/** The resource_link items of a tool's answer, as text to follow the text block (see mcp-resource-links). */
function linksJson(tool: string, answer: () => unknown, base: string | undefined): string {
  if (base === undefined || !mayLink(tool)) return '';
  let text = '';
  for (const link of resourceLinks(tool, answer(), base)) text += `,${JSON.stringify(link)}`;
  return text;
}

/**
 * Tool results of answers whose text the service stores (a Task's status), by that stored text:
 * the same status is asked for again and again (an agent polling), and escaping its JobResponse
 * afresh for the text block was a tenth of a call's CPU, with its garbage. The stored text is one
 * string kept by the service, so looking it up hashes it once, not at every call. Bounded: the
 * last MAX answers, each at most MAX_TEXT characters (a few MB at worst).
 */
class StoredResults {
  static readonly MAX = 256;
  static readonly MAX_TEXT = 8192;
  readonly #results = new Map<string, { tail: string; tool: string; base: string | undefined; result: string }>();

  get(answer: SerializedAnswer, response: JobResponse, tool: string, base: string | undefined): string {
    const links = () => linksJson(tool, () => answer.value, base);
    if (answer.json.length > StoredResults.MAX_TEXT) return toolResultJson(responseJson(response), response.success, links());
    const tail = tailJson(response);
    const known = this.#results.get(answer.json);
    if (known?.tail === tail && known.tool === tool && known.base === base) return known.result;
    const result = toolResultJson(responseJson(response), response.success, links());
    if (!known && this.#results.size >= StoredResults.MAX) this.#results.delete(this.#results.keys().next().value!);
    this.#results.set(answer.json, { tail, tool, base, result });
    return result;
  }
}
const storedResults = new StoredResults();

/**
 * Answers a plain call, as JSON text, with the same resolveCall/runTool as the SDK's handler, so
 * results and errors are the same on both paths (an error shaped as the SDK's server shapes a
 * handler's). The tool result holds the JobResponse twice, as text and as structured content
 * (toolResult): here it is serialized once and that text used for both.
 */
export async function answerPlainCall(call: PlainCall, registry: JobRegistry, signals: () => AbortSignal[], caller?: CallerTag, base?: string): Promise<string> {
  // String() for the usual numeric id: JSON.stringify of a number takes its slow generic path.
  const id = typeof call.id === 'number' ? String(call.id) : JSON.stringify(call.id);
  try {
    const { entry, args } = resolveCall(registry, call.name, call.arguments, caller);
    const response = await runTool(registry, entry, args, createJobContext(signals, false, undefined, caller));
    // The JobResponse's text as HTTP JSON writes it: an answer whose text is already known (a
    // Task's status) is not serialized again, nor escaped again; a streamed answer is made whole first.
    const { answer } = response;
    let result: string;
    if (answer instanceof SerializedAnswer) result = storedResults.get(answer, response, call.name, base);
    else if (answer instanceof StreamedAnswer) {
      const plain = await plainAnswer(response);
      result = toolResultJson(JSON.stringify(plain), response.success, linksJson(call.name, () => plain.answer, base));
    } else result = toolResultJson(responseJson(response), response.success, linksJson(call.name, () => answer, base));
    return `{"jsonrpc":"2.0","id":${id},"result":${result}}`;
  } catch (err) {
    const code = err instanceof McpError ? err.code : ErrorCode.InternalError;
    const data = err instanceof McpError ? err.data : undefined;
    const error: JSONRPCError = { jsonrpc: '2.0', id: call.id, error: { code, message: wireErrorMessage(code, (err as Error).message || 'Internal error'), ...(data === undefined ? {} : { data }) } };
    return JSON.stringify(error);
  }
}
