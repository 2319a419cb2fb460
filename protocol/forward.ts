import type { OutgoingHttpHeaders } from 'node:http';
import type { TargetEntry } from '../schemas/config.js';
import type { StreamEvent } from '../schemas/events.js';
import type { JobCatalog, JobResponse } from '../schemas/job-response.js';
import { readSseEvents } from './sse-reader.js';
import { openUpstream, readText, readWholeOrStream, type BodyRead, type UpstreamResponse } from './upstream.js';
import { HttpError, RuntimeError } from '../core/errors.js';
import type { ForwardedAnswer, Forwarder } from './forwarder.js';
import { indexTargets, normalizeAddress } from '../core/targets.js';
import { isObject } from '../core/is-object.js';

/** Largest remote catalog read into memory; a bigger one is a broken answer (502). */
const MAX_CATALOG_BYTES = 16 * 1024 * 1024;
/**
 * Remote answers up to this size are read, checked and parsed; larger ones are streamed to the
 * caller as they arrive, so concurrent large answers never sit whole in this process.
 */
const WHOLE_ANSWER_BYTES = 1024 * 1024;

const isJobResponse = (v: unknown): v is JobResponse => isObject(v) && typeof v['success'] === 'boolean';
const isCatalog = (v: unknown): v is JobCatalog => isObject(v) && Array.isArray(v['items']) && typeof v['total'] === 'number';

/** Only the stored token goes out: the caller's own headers never reach the target. */
function headersFor(target: TargetEntry, accept: string): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = { accept, 'content-type': 'application/json' };
  if (target.token) headers['authorization'] = `Bearer ${target.token}`;
  return headers;
}

/** Sends one request to the target; failing to get a response head is a 502. */
async function exchange(target: TargetEntry, method: string, path: string, accept: string, body: string | undefined, signal: AbortSignal): Promise<UpstreamResponse> {
  try {
    return await openUpstream(new URL(path, target.address), { method, headers: headersFor(target, accept), ...(body === undefined ? {} : { body }), signal });
  } catch (err) {
    // Nobody is left to read the answer (client gone or service stopping): no 502, no log line.
    if (signal.aborted) throw new HttpError(503, 'Forwarded call aborted');
    throw new HttpError(502, `Cannot reach target ${target.address}: ${(err as Error).message}`);
  }
}

async function readBody(target: TargetEntry, res: UpstreamResponse, limit = WHOLE_ANSWER_BYTES): Promise<string> {
  try {
    return await readText(res, limit);
  } catch (err) {
    throw new HttpError(502, `Target ${target.address} broke off its answer: ${(err as Error).message}`);
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Maps a remote status that is not 200 to what the caller sees. A remote 4xx is the caller's
 * problem and passes through with its detail, except 401: the caller's own token was accepted
 * here, so a 401 there means the token configured for the target is wrong, which the caller can
 * neither see nor fix: that is a failed forwarding (502), not an authentication prompt.
 */
function remoteFailure(target: TargetEntry, status: number, text: string): HttpError {
  const body = parse(text);
  const detail = isObject(body) ? body['detail'] : undefined;
  if (status === 401) return new HttpError(502, `Target ${target.address} rejected the token configured for it (HTTP 401)`);
  if (status >= 400 && status < 500) {
    return new HttpError(status, typeof detail === 'string' || Array.isArray(detail) ? detail : text.slice(0, 1000) || `Target answered HTTP ${status}`);
  }
  const shown = typeof detail === 'string' ? detail : text.slice(0, 200);
  return new HttpError(502, `Target ${target.address} answered HTTP ${status}${shown ? `: ${shown}` : ''}`);
}

/** A complete JSON answer of the expected shape, or the right HttpError. */
async function expectJson<T>(target: TargetEntry, res: UpstreamResponse, valid: (v: unknown) => v is T, what: string, limit?: number): Promise<T> {
  const text = await readBody(target, res, limit);
  const status = res.statusCode;
  if (status !== 200) throw remoteFailure(target, status, text);
  return checked(target, parse(text), valid, what);
}

function checked<T>(target: TargetEntry, body: unknown, valid: (v: unknown) => v is T, what: string): T {
  if (!valid(body)) throw new HttpError(502, `Target ${target.address} answered HTTP 200 without ${what}`);
  return body;
}

/**
 * A forwarded JobResponse: parsed and checked when small; a large one is passed on as a stream
 * once its first bytes look like a JSON object (a break later reaches the caller as a broken
 * response, not a short one).
 */
async function forwardedAnswer(target: TargetEntry, res: UpstreamResponse): Promise<ForwardedAnswer> {
  if (res.statusCode !== 200) return expectJson(target, res, isJobResponse, 'a JobResponse');
  let read: BodyRead;
  try {
    read = await readWholeOrStream(res, WHOLE_ANSWER_BYTES);
  } catch (err) {
    throw new HttpError(502, `Target ${target.address} broke off its answer: ${(err as Error).message}`);
  }
  if ('whole' in read) return checked(target, parse(read.whole.toString('utf8')), isJobResponse, 'a JobResponse');
  if (!/^\s*\{\s*"/.test(read.first.subarray(0, 64).toString('latin1'))) {
    await read.stream[Symbol.asyncIterator]().return?.();
    throw new HttpError(502, `Target ${target.address} answered HTTP 200 without a JobResponse`);
  }
  return { stream: read.stream };
}

/** Passes remote events on one by one; a broken stream becomes a business failure at its end. */
async function* relay(target: TargetEntry, res: UpstreamResponse): AsyncGenerator<StreamEvent> {
  try {
    yield* readSseEvents(res);
  } catch (err) {
    throw new RuntimeError(`event stream from target ${target.address} broke off: ${(err as Error).message}`);
  } finally {
    res.destroy(); // closes the upstream request when the caller stops early
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
      const res = await exchange(target, 'POST', `/jobs/${encodeURIComponent(job)}`, 'application/json', JSON.stringify({ arguments: args }), signal);
      return forwardedAnswer(target, res);
    },
    async openStream(address, job, args, signal) {
      const target = get(address);
      const res = await exchange(target, 'POST', `/jobs/${encodeURIComponent(job)}/events`, 'text/event-stream', JSON.stringify({ arguments: args }), signal);
      // Peek at the head before the caller starts its own SSE response, so remote 4xx stay 4xx.
      if (res.statusCode !== 200) throw remoteFailure(target, res.statusCode, await readBody(target, res));
      if (!String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        res.destroy();
        throw new HttpError(502, `Target ${target.address} answered without an event stream (content-type ${res.headers['content-type'] ?? 'missing'})`);
      }
      return relay(target, res);
    },
    async catalog(address, signal) {
      const target = get(address);
      const res = await exchange(target, 'GET', '/jobs', 'application/json', undefined, signal);
      const body = await expectJson(target, res, isJobResponse, 'a JobResponse', MAX_CATALOG_BYTES);
      if (!body.success || !isCatalog(body.answer)) throw new HttpError(502, `Target ${target.address} answered GET /jobs without a job catalog`);
      return body.answer;
    },
  };
}
