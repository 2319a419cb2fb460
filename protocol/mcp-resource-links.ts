import type { ResourceLink } from '@modelcontextprotocol/sdk/types.js';
import { isObject } from '../core/is-object.js';
import { mediaTypeOf } from './media-types.js';

/** Tools whose answer holds a TaskStatus (get_task_context: under `status`). */
const STATUS_TOOLS: ReadonlySet<string> = new Set(['status', 'wait_task', 'await_task', 'stream_task']);
const CONTEXT_TOOL = 'get_task_context';

/** Whether a tool's results may carry links: the plain-call path looks no further for the rest. */
export function mayLink(tool: string): boolean {
  return STATUS_TOOLS.has(tool) || tool === CONTEXT_TOOL;
}

/** The service's address as the client reached it (its Host header), for links it can follow. */
export function baseUrlOf(headers: Readonly<Record<string, string>> | undefined): string | undefined {
  const host = headers?.['host'];
  return host ? `http://${host}` : undefined;
}

function link(base: string, path: string, name: string, description: string, size?: number): ResourceLink {
  return { type: 'resource_link', uri: `${base}/files?path=${encodeURIComponent(path)}`, name, description, mimeType: mediaTypeOf(path), ...(size === undefined ? {} : { size }) };
}

/**
 * MCP `resource_link` items for the artifacts and the log of the TaskStatus in a tool's answer:
 * each URI downloads the file through `GET /files` (with the caller's bearer token), so bytes
 * never pass through a tool (spec: Endpoints). Empty for any other tool or answer.
 */
export function resourceLinks(tool: string, answer: unknown, base: string | undefined): ResourceLink[] {
  if (base === undefined || !mayLink(tool)) return [];
  const status = tool === CONTEXT_TOOL ? (isObject(answer) ? answer['status'] : undefined) : answer;
  if (!isObject(status)) return [];
  const { task_id: id, task_type: type, result, log_path: logPath } = status;
  if (typeof id !== 'string' || typeof type !== 'string') return [];
  const links: ResourceLink[] = [];
  const artifacts = isObject(result) ? result['artifacts'] : undefined;
  if (isObject(artifacts)) {
    for (const [name, record] of Object.entries(artifacts)) {
      if (!isObject(record) || typeof record['path'] !== 'string') continue;
      const size = typeof record['size'] === 'number' ? record['size'] : undefined;
      links.push(link(base, `${type}/${id}/${record['path']}`, name, `Artifact ${name} of Task ${id}`, size));
    }
  }
  if (typeof logPath === 'string' && logPath !== '') links.push({ ...link(base, logPath, 'log', `Log of Task ${id}`), mimeType: 'text/plain' });
  return links;
}
