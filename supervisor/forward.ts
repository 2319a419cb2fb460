import type { TargetEntry } from '../schemas/config.js';
import type { StreamEvent } from '../schemas/events.js';
import type { JobCatalog, JobResponse } from '../schemas/job-response.js';
import { HttpError } from './errors.js';
import type { Forwarder } from './forwarder.js';
import { indexTargets, normalizeAddress } from './targets.js';

function headersFor(target: TargetEntry): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (target.token) headers['authorization'] = `Bearer ${target.token}`;
  return headers;
}

async function remote(target: TargetEntry, path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(`${target.address}${path}`, { ...init, headers: { ...headersFor(target), ...(init.headers as Record<string, string>) } });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new HttpError(502, `Cannot reach target ${target.address}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
}

/** Remote 4xx pass through with their detail; anything else unexpected is a 502. */
async function expectJson<T>(target: TargetEntry, response: Response, check: (v: unknown) => v is T): Promise<T> {
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(502, `Target ${target.address} answered HTTP ${response.status} with a body that is not JSON`);
  }
  if (response.status >= 400 && response.status < 500) {
    const detail = (body as { detail?: unknown }).detail;
    throw new HttpError(response.status, typeof detail === 'string' || Array.isArray(detail) ? detail : `Target answered HTTP ${response.status}`);
  }
  if (response.status !== 200 || !check(body)) throw new HttpError(502, `Target ${target.address} answered HTTP ${response.status} without a JobResponse`);
  return body;
}

const isJobResponse = (v: unknown): v is JobResponse => typeof v === 'object' && v !== null && typeof (v as JobResponse).success === 'boolean';

/** Parses an SSE byte stream into events, one frame at a time (no buffering of the whole stream). */
async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
      if (data) yield JSON.parse(data) as StreamEvent;
    }
  }
}

/** Forwards calls to configured targets with the token stored in this service's configuration. */
export function createForwarder(targets: readonly TargetEntry[]): Forwarder {
  const byAddress = indexTargets(targets);
  const get = (address: string): TargetEntry => {
    const t = byAddress.get(address);
    if (!t) throw new HttpError(422, `target ${JSON.stringify(address)} is not one of the configured targets`);
    return t;
  };
  return {
    resolve(address) {
      try {
        const normalized = normalizeAddress(address);
        return byAddress.has(normalized) ? normalized : undefined;
      } catch {
        return undefined;
      }
    },
    async call(address, job, args, signal) {
      const target = get(address);
      const response = await remote(target, `/jobs/${encodeURIComponent(job)}`, { method: 'POST', body: JSON.stringify({ arguments: args }), signal });
      return expectJson(target, response, isJobResponse);
    },
    async *stream(address, job, args, signal) {
      const target = get(address);
      const response = await remote(target, `/jobs/${encodeURIComponent(job)}/events`, {
        method: 'POST',
        body: JSON.stringify({ arguments: args }),
        headers: { accept: 'text/event-stream' },
        signal,
      });
      if (response.status !== 200 || !response.body) {
        const text = await response.text().catch(() => '');
        throw new HttpError(502, `Target ${target.address} answered HTTP ${response.status}: ${text.slice(0, 500)}`);
      }
      yield* readEvents(response.body);
    },
    async catalog(address, signal) {
      const target = get(address);
      const response = await remote(target, '/jobs', { method: 'GET', signal });
      const body = await expectJson(target, response, isJobResponse);
      return body.answer as JobCatalog;
    },
  };
}
