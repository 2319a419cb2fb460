import type { TargetEntry } from '../schemas/config.js';
import type { StreamEvent } from '../schemas/events.js';
import type { JobCatalog, JobResponse } from '../schemas/job-response.js';
import { readSseEvents } from './sse-reader.js';
import { JobResponseCheck, JsonStreamError } from './json-stream-check.js';
import { readText, UpstreamError, type UpstreamResponse } from './upstream.js';
import { KeepAlivePool, type PooledResponse } from './keep-alive-pool.js';
import { hookOf, type AbortHook } from './abort-hook.js';
import { ConfigError, HttpError, RuntimeError } from '../core/errors.js';
import { indexTargets, normalizeAddress } from '../core/targets.js';
import { isObject } from '../core/is-object.js';

/** Largest remote catalog read into memory; a bigger one is a broken answer (502). */
const MAX_CATALOG_BYTES = 16 * 1024 * 1024;
/**
 * Remote answers up to this size are read and checked before they are passed on; larger ones
 * are streamed to the caller as they arrive, so concurrent large answers never sit whole here.
 */
const WHOLE_ANSWER_BYTES = 1024 * 1024;

/** A forwarded JobResponse as the target's own JSON bytes: checked and whole, or (when large) streamed. */
export type ForwardedAnswer = { json: Buffer } | { stream: AsyncIterable<Uint8Array> };

/**
 * Runs calls on another configured service (a target). Transports ask it whether an address is
 * configured (422 otherwise) and hand it the raw arguments; validation happens on the target.
 */
export interface Forwarder {
  /** The configured address matching `address` after normalisation, or undefined. */
  resolve(address: string): string | undefined;
  /** Ordinary call; remote 4xx pass through as HttpError, connection/protocol failures are 502. */
  call(address: string, job: string, args: Record<string, unknown>, abort: AbortHook): Promise<ForwardedAnswer>;
  /**
   * Opens the remote `/events` call. Resolves once the target answered with an event stream, so
   * a remote 4xx (or a 502) is thrown before the caller commits to its own SSE response; the
   * events then pass through one by one, ending with the target's `result`. Leaving the loop
   * early (or aborting `signal`) closes the upstream request.
   */
  openStream(address: string, job: string, args: Record<string, unknown>, signal: AbortSignal): Promise<AsyncIterable<StreamEvent>>;
  catalog(address: string, signal: AbortSignal): Promise<JobCatalog>;
  /** Drops every connection to the targets (the service is stopping); calls still open fail. */
  close(): void;
}

type Accept = 'application/json' | 'text/event-stream';

const isJobResponse = (v: unknown): v is JobResponse => isObject(v) && typeof v['success'] === 'boolean';
const isCatalog = (v: unknown): v is JobCatalog => isObject(v) && Array.isArray(v['items']) && typeof v['total'] === 'number';

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The fields a target's 4xx answer carries beside `detail` (such as `unknown_job`, the closest
 * names to a mistyped Job): they help the caller fix the call, so they pass through as written.
 */
function besideDetail(body: unknown): Record<string, unknown> | undefined {
  if (!isObject(body)) return undefined;
  const { detail: _detail, ...rest } = body;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/** A target with its connections and the header lines every request to it carries. */
class Target {
  readonly pool: KeepAlivePool;
  /**
   * The header lines of a request by what it accepts, made once: only the stored token goes out,
   * the caller's own headers never reach the target.
   */
  readonly #headerLines: Record<Accept, string>;

  constructor(readonly entry: TargetEntry) {
    this.pool = new KeepAlivePool(new URL(entry.address));
    const auth = entry.token ? `authorization: Bearer ${entry.token}\r\n` : '';
    const lines = (accept: Accept) => `accept: ${accept}\r\ncontent-type: application/json\r\n${auth}`;
    this.#headerLines = { 'application/json': lines('application/json'), 'text/event-stream': lines('text/event-stream') };
  }

  /** Sends one request; failing to get a response head is a 502. */
  exchange(method: string, path: string, accept: Accept, body: string | undefined, abort: AbortHook, wholeUpTo: number): Promise<PooledResponse> {
    return this.pool.request({ method, path, headerLines: this.#headerLines[accept], body, abort, wholeUpTo }).catch((err: unknown) => {
      // Nobody is left to read the answer (client gone or service stopping): no 502, no log line.
      if (abort.aborted) throw new HttpError(503, 'Forwarded call aborted');
      if (err instanceof UpstreamError && err.afterHead) throw new HttpError(502, `Target ${this.entry.address} broke off its answer: ${err.message}`);
      throw new HttpError(502, `Cannot reach target ${this.entry.address}: ${(err as Error).message}`);
    });
  }

  /** The whole body as text, refusing more than `limit` bytes (502). */
  async text(res: UpstreamResponse, limit = WHOLE_ANSWER_BYTES): Promise<string> {
    try {
      return await readText(res, limit);
    } catch (err) {
      throw new HttpError(502, `Target ${this.entry.address} broke off its answer: ${(err as Error).message}`);
    }
  }

  /**
   * Maps a remote status that is not 200 to what the caller sees. A remote 4xx is the caller's
   * problem and passes through with its detail, except 401: the caller's own token was accepted
   * here, so a 401 there means the token configured for the target is wrong, which the caller can
   * neither see nor fix: that is a failed forwarding (502), not an authentication prompt.
   */
  async failure(res: UpstreamResponse): Promise<HttpError> {
    const { statusCode: status } = res;
    const text = await this.text(res);
    const body = parse(text);
    const detail = isObject(body) ? body['detail'] : undefined;
    if (status === 401) return new HttpError(502, `Target ${this.entry.address} rejected the token configured for it (HTTP 401)`);
    if (status >= 400 && status < 500) {
      if (typeof detail === 'string' || Array.isArray(detail)) return new HttpError(status, detail, besideDetail(body));
      return new HttpError(status, text.slice(0, 1000) || `Target answered HTTP ${status}`);
    }
    const shown = typeof detail === 'string' ? detail : text.slice(0, 200);
    return new HttpError(502, `Target ${this.entry.address} answered HTTP ${status}${shown ? `: ${shown}` : ''}`);
  }

  checked<T>(body: unknown, valid: (v: unknown) => v is T, what: string): T {
    if (!valid(body)) throw new HttpError(502, `Target ${this.entry.address} answered HTTP 200 without ${what}`);
    return body;
  }

  /**
   * A forwarded JobResponse, passed on as the target's bytes: checked whole when small; a large
   * one is checked as it streams (JobResponseCheck), from its first chunk, which decides between
   * a 502 and a streamed 200. Once streaming, a byte that cannot belong to a JobResponse, or an
   * end inside one, stops the stream with an error before the byte is passed on: the caller's
   * response ends broken (reset, no final chunk), never as short or invalid JSON that looks
   * complete. A whole answer comes back without a promise.
   */
  answer(res: PooledResponse): ForwardedAnswer | Promise<ForwardedAnswer> {
    if (res.statusCode === 200 && res.whole) {
      this.checked(parse(res.whole.toString('utf8')), isJobResponse, 'a JobResponse');
      return { json: res.whole };
    }
    return this.#streamedAnswer(res);
  }

  async #streamedAnswer(res: PooledResponse): Promise<ForwardedAnswer> {
    if (res.statusCode !== 200) throw await this.failure(res);
    const chunks = res[Symbol.asyncIterator]();
    const first = await chunks.next().catch((err: Error) => {
      throw new HttpError(502, `Target ${this.entry.address} broke off its answer: ${err.message}`);
    });
    const check = new JobResponseCheck();
    try {
      if (first.done) throw new JsonStreamError('the answer is empty');
      check.feed(first.value);
    } catch (err) {
      await chunks.return?.();
      throw new HttpError(502, `Target ${this.entry.address} answered HTTP 200 without a JobResponse: ${(err as Error).message}`);
    }
    const address = this.entry.address;
    return {
      stream: (async function* () {
        yield first.value;
        try {
          for (let next = await chunks.next(); !next.done; next = await chunks.next()) {
            check.feed(next.value);
            yield next.value;
          }
          check.end();
        } catch (err) {
          throw new Error(`target ${address} sent a broken answer: ${(err as Error).message}`);
        } finally {
          await chunks.return?.();
        }
      })(),
    };
  }

  /** Passes remote events on one by one; a broken stream becomes a business failure at its end. */
  async *relay(res: UpstreamResponse): AsyncGenerator<StreamEvent> {
    try {
      yield* readSseEvents(res);
    } catch (err) {
      throw new RuntimeError(`event stream from target ${this.entry.address} broke off: ${(err as Error).message}`);
    } finally {
      res.destroy(); // closes the upstream request when the caller stops early
    }
  }
}

/** Forwards calls to configured targets with the token stored in this service's configuration. */
export function createForwarder(targets: readonly TargetEntry[]): Forwarder {
  const byAddress = new Map<string, Target>();
  for (const [address, entry] of indexTargets(targets)) {
    if (entry.token && /[\r\n]/.test(entry.token)) throw new ConfigError(`targets: the token of ${address} must not contain line breaks`);
    byAddress.set(address, new Target(entry));
  }
  const get = (address: string): Target => {
    const t = byAddress.get(address);
    if (!t) throw new HttpError(422, `target ${JSON.stringify(address)} is not one of the configured targets`);
    return t;
  };
  return {
    resolve(address) {
      if (byAddress.has(address)) return address; // already normalised: the usual case, no URL parsing
      try {
        const normalized = normalizeAddress(address);
        return byAddress.has(normalized) ? normalized : undefined;
      } catch {
        return undefined;
      }
    },
    async call(address, job, args, abort) {
      const target = get(address);
      return target.answer(await target.exchange('POST', `/jobs/${encodeURIComponent(job)}`, 'application/json', JSON.stringify({ arguments: args }), abort, WHOLE_ANSWER_BYTES));
    },
    async openStream(address, job, args, signal) {
      const target = get(address);
      const res = await target.exchange('POST', `/jobs/${encodeURIComponent(job)}/events`, 'text/event-stream', JSON.stringify({ arguments: args }), hookOf(signal), 0);
      // Peek at the head before the caller starts its own SSE response, so remote 4xx stay 4xx.
      if (res.statusCode !== 200) throw await target.failure(res);
      if (!String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        res.destroy();
        throw new HttpError(502, `Target ${address} answered without an event stream (content-type ${res.headers['content-type'] ?? 'missing'})`);
      }
      return target.relay(res);
    },
    async catalog(address, signal) {
      const target = get(address);
      const res = await target.exchange('GET', '/jobs', 'application/json', undefined, hookOf(signal), MAX_CATALOG_BYTES);
      if (res.statusCode !== 200) throw await target.failure(res);
      const body = target.checked(parse(await target.text(res, MAX_CATALOG_BYTES)), isJobResponse, 'a JobResponse');
      if (!body.success || !isCatalog(body.answer)) throw new HttpError(502, `Target ${address} answered GET /jobs without a job catalog`);
      return body.answer;
    },
    close() {
      for (const target of byAddress.values()) target.pool.close();
    },
  };
}
