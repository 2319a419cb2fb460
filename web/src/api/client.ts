import { readEvents } from './sse-reader.js';
import { clearToken, loadToken } from './token.js';
import type { FileCopy, JobDescriptor, JobResponse, ResultEvent, StreamEvent } from './types.js';

/** An HTTP-level failure, with the service's `detail` rendered as the service worded it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

/** A 422 carries a list of `{loc, msg}`; everything else a plain string. */
function renderDetail(detail: unknown): string {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((d: { loc?: unknown[]; msg?: string }) => (Array.isArray(d.loc) && d.loc.length ? `${d.loc.join('.')}: ${d.msg ?? ''}` : (d.msg ?? JSON.stringify(d))))
      .join('\n');
  }
  return JSON.stringify(detail);
}

async function toApiError(res: Response): Promise<ApiError> {
  const text = await res.text();
  try {
    return new ApiError(res.status, renderDetail((JSON.parse(text) as { detail?: unknown }).detail ?? text));
  } catch {
    return new ApiError(res.status, text || `HTTP ${res.status}`);
  }
}

type Listener = (err: ApiError) => void;
const TARGET_KEY = 'taskyard.target';

/**
 * The console's one door to the service: every call carries the bearer token and, when a target
 * machine is selected, the envelope `target` so the service forwards it there.
 */
/** What the signed-in token may do on this service: its name and its Jobs (from `GET /jobs`). */
export interface SignedIn {
  readonly token: string | null;
  readonly jobs: ReadonlySet<string>;
}

export class Api {
  #target: string | null = sessionStorage.getItem(TARGET_KEY);
  readonly #unauthorized = new Set<Listener>();
  #signedIn: SignedIn | null = null;

  /** The signed-in token's name and Jobs, once the catalog of this service was read. */
  get signedIn(): SignedIn | null {
    return this.#signedIn;
  }

  /**
   * Whether the signed-in token may call a Job of this service: the console hides what it may not
   * (the service refuses it anyway). True until the catalog is known.
   */
  may(job: string): boolean {
    return this.#signedIn === null || this.#signedIn.jobs.has(job);
  }

  get target(): string | null {
    return this.#target;
  }

  /** Selects the machine that later calls run on (`null`: this service). */
  setTarget(address: string | null): void {
    this.#target = address;
    if (address) sessionStorage.setItem(TARGET_KEY, address);
    else sessionStorage.removeItem(TARGET_KEY);
  }

  /** Called when the service answers 401, so the app can ask for the token again. */
  onUnauthorized(listener: Listener): void {
    this.#unauthorized.add(listener);
  }

  #headers(json: boolean): HeadersInit {
    const token = loadToken();
    // The service's audit log names the console's calls as such.
    return { 'x-taskyard-client': 'console', ...(json ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) };
  }

  async #fetch(path: string, init: RequestInit): Promise<Response> {
    const res = await fetch(path, init);
    if (res.ok) return res;
    const err = await toApiError(res);
    if (res.status === 401) {
      clearToken();
      for (const l of this.#unauthorized) l(err);
    }
    throw err;
  }

  #envelope(args: Record<string, unknown>, local: boolean): string {
    return JSON.stringify(this.#target && !local ? { arguments: args, target: this.#target } : { arguments: args });
  }

  /** `GET /jobs` of the selected machine. */
  async catalog(signal?: AbortSignal): Promise<JobDescriptor[]> {
    const query = this.#target ? `?target=${encodeURIComponent(this.#target)}` : '';
    const res = await this.#fetch(`/jobs${query}`, { headers: this.#headers(false), ...(signal ? { signal } : {}) });
    const body = (await res.json()) as JobResponse<{ items: JobDescriptor[] }>;
    if (!this.#target) {
      const token = body.metadata['token'];
      this.#signedIn = { token: typeof token === 'string' ? token : null, jobs: new Set(body.answer.items.map((j) => j.name)) };
    }
    return body.answer.items;
  }

  /** `POST /jobs/{name}`: the JobResponse (business failures included); throws ApiError on 4xx/5xx. */
  async call<T = unknown>(name: string, args: Record<string, unknown> = {}, opts: { signal?: AbortSignal; local?: boolean } = {}): Promise<JobResponse<T>> {
    const res = await this.#fetch(`/jobs/${encodeURIComponent(name)}`, {
      method: 'POST',
      headers: this.#headers(true),
      body: this.#envelope(args, opts.local ?? false),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    return (await res.json()) as JobResponse<T>;
  }

  /** Like `call`, but a business failure throws with the service's answer text. */
  async answer<T>(name: string, args: Record<string, unknown> = {}, opts: { signal?: AbortSignal; local?: boolean } = {}): Promise<T> {
    const res = await this.call<T>(name, args, opts);
    if (!res.success) throw new Error(typeof res.answer === 'string' ? res.answer : JSON.stringify(res.answer));
    return res.answer;
  }

  /**
   * `GET /files?path=`: a workspace file of this service as a Blob (a download carries the bearer
   * token in a header, so it cannot be a plain link). Files are not forwarded to a target.
   */
  async file(path: string, signal?: AbortSignal): Promise<Blob> {
    if (this.#target) throw new ApiError(422, 'Files can be downloaded from this service only, not from a selected target');
    const res = await this.#fetch(`/files?path=${encodeURIComponent(path)}`, { headers: this.#headers(false), ...(signal ? { signal } : {}) });
    return res.blob();
  }

  /**
   * Stages a file with `POST /files` (the raw bytes; XMLHttpRequest, since fetch reports no upload
   * progress): `onProgress` sees the bytes sent. Answers the FileCopy; a refusal throws the
   * service's detail.
   */
  upload(file: File, onProgress: (sent: number, total: number) => void, signal?: AbortSignal): Promise<FileCopy> {
    if (this.#target) return Promise.reject(new ApiError(422, 'Files can be uploaded to this service only, not to a selected target'));
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open('POST', '/files');
      for (const [name, value] of Object.entries(this.#headers(false) as Record<string, string>)) xhr.setRequestHeader(name, value);
      xhr.setRequestHeader('content-type', 'application/octet-stream');
      xhr.setRequestHeader('x-file-name', encodeURIComponent(file.name));
      xhr.upload.addEventListener('progress', (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size));
      xhr.addEventListener('load', () => {
        let body: { answer?: unknown; detail?: unknown } = {};
        try {
          body = JSON.parse(xhr.responseText) as typeof body;
        } catch {
          // Not JSON: the status says enough.
        }
        if (xhr.status === 200) return resolve(body.answer as FileCopy);
        const detail = typeof body.detail === 'string' ? body.detail : `HTTP ${xhr.status}`;
        if (xhr.status === 401) clearToken();
        reject(new ApiError(xhr.status, detail));
      });
      xhr.addEventListener('error', () => reject(new ApiError(0, `the upload of ${file.name} broke off`)));
      xhr.addEventListener('abort', () => reject(new ApiError(0, `the upload of ${file.name} was stopped`)));
      signal?.addEventListener('abort', () => xhr.abort(), { once: true });
      xhr.send(file);
    });
  }

  /**
   * `POST /jobs/{name}/events` with a streaming read: `onEvent` sees every event as it arrives,
   * the promise gives the terminal `result`. A stream cut before `result` is a failure (spec,
   * Events 3); aborting `signal` closes the stream.
   */
  async stream(name: string, args: Record<string, unknown>, onEvent: (e: StreamEvent) => void, signal?: AbortSignal): Promise<ResultEvent> {
    const res = await this.#fetch(`/jobs/${encodeURIComponent(name)}/events`, {
      method: 'POST',
      headers: { ...this.#headers(true), accept: 'text/event-stream' },
      body: this.#envelope(args, false),
      ...(signal ? { signal } : {}),
    });
    if (!res.body) throw new ApiError(res.status, 'The response has no body');
    for await (const event of readEvents(res.body)) {
      onEvent(event);
      if (event.kind === 'result') return event;
    }
    return { kind: 'result', answer: 'The stream ended without a result', success: false, metadata: {} };
  }
}

/** Text for any error a call may throw, as the service worded it when it came from the service. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.status === 401 || err.status === 404 || err.status === 422 ? err.detail : `HTTP ${err.status}: ${err.detail}`;
  if (err instanceof Error) return err.name === 'AbortError' ? 'Cancelled' : err.message;
  return String(err);
}
