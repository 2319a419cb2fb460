import { hash } from 'node:crypto';
import { ANONYMOUS_NAME, SERVICE_TOKEN_NAME, tagsOf, type AuditTransport, type CallerTag } from '../core/caller.js';
import { ConfigError, HttpError } from '../core/errors.js';
import type { JobRegistry } from '../core/registry.js';
import type { HeaderMap, IncomingRequest } from './http.js';

/** A scoped token as configured (`service.tokens[]`), its value already read from its file if given so. */
export interface ScopedToken {
  readonly name: string;
  readonly token: string;
  /** Job names, or `['*']` for all. */
  readonly jobs: readonly string[];
}

/**
 * `/files` follows the Jobs that use it: downloads serve a token that may read workspace files or
 * be told of artifacts; uploads (and removing staged files) one that may consume a staged upload.
 */
export const DOWNLOAD_JOBS: readonly string[] = ['preview_file', 'list_entries', 'status', 'wait_task', 'await_task', 'stream_task', 'get_task_context'];
export const UPLOAD_JOBS: readonly string[] = ['install_plugin', 'sync_tasks'];

/** Who a request's bearer token says it is, and what it may call. Made once per token at start. */
export interface Caller {
  readonly name: string;
  /** The Jobs it may call: the whole registry, or a view of its scope. */
  readonly registry: JobRegistry;
  /** Whether the whole registry is its scope (the service token, an open service). */
  readonly unrestricted: boolean;
  readonly mayDownload: boolean;
  readonly mayUpload: boolean;
  /** Its tag per door, made once (JobContext.caller). */
  readonly tags: Readonly<Record<AuditTransport, CallerTag>>;
}

const BEARER = /^Bearer[ \t]+(.+?)[ \t]*$/i;
/** The header the web console sends, so the audit log can tell its calls from other HTTP clients. */
export const CONSOLE_HEADER = 'x-taskyard-client';

function callerOf(name: string, registry: JobRegistry, unrestricted: boolean): Caller {
  const may = (jobs: readonly string[]) => unrestricted || jobs.some((job) => registry.get(job) !== undefined);
  return Object.freeze({ name, registry, unrestricted, mayDownload: may(DOWNLOAD_JOBS), mayUpload: may(UPLOAD_JOBS), tags: tagsOf(name, registry) });
}

// One-shot hashing, base64 text: the lookup key of a presented token.
const digest = (s: string): string => hash('sha256', s, 'base64');

/** The Caller a front door found for each request it let in (read by routes that need it). */
const requestCallers = new WeakMap<IncomingRequest, Caller>();

/** The Caller of a request the front door let in; undefined for unprotected paths. */
export function requestCaller(req: IncomingRequest): Caller | undefined {
  return requestCallers.get(req);
}

/**
 * The bearer tokens a service accepts: `service.token` (every Job) and the scoped tokens of
 * `service.tokens` (their Jobs only). A presented token is hashed once and looked up by its
 * digest: the cost is one hash whatever the number of tokens, and the lookup compares digests of
 * what the client sent, which tell nothing about a configured token's value (no early exit on a
 * matching prefix of the token itself).
 */
export class TokenScopes {
  readonly #byDigest = new Map<string, Caller>();
  /** The caller of an open service (no service token): everyone. */
  readonly #open: Caller | null;

  constructor(registry: JobRegistry, serviceToken: string | null, scoped: readonly ScopedToken[]) {
    if (serviceToken === null) {
      if (scoped.length > 0) throw new ConfigError('service.tokens: scoped tokens need a service token (service.token, or the generated one); an open service (--no-token) lets every caller in');
      this.#open = callerOf(ANONYMOUS_NAME, registry, true);
      return;
    }
    this.#open = null;
    this.#byDigest.set(digest(serviceToken), callerOf(SERVICE_TOKEN_NAME, registry, true));
    scoped.forEach((entry, i) => {
      for (const job of entry.jobs) {
        if (job !== '*' && !registry.declares(job)) throw new ConfigError(`service.tokens[${i}].jobs: no Job named ${JSON.stringify(job)}`);
      }
      const key = digest(entry.token);
      if (this.#byDigest.has(key)) throw new ConfigError(`service.tokens[${i}].token: the same value as another token; every token must be different`);
      const view = registry.restrictTo(entry.jobs);
      this.#byDigest.set(key, callerOf(entry.name, view, view === registry));
    });
  }

  /** Whether the service has no token: every caller is let in (and must prove it is no other site's page). */
  get open(): boolean {
    return this.#open !== null;
  }

  /** The caller a request's headers name, or null (401). Never logs or keeps the token. */
  identify(headers: HeaderMap): Caller | null {
    if (this.#open) return this.#open;
    const header = headers['authorization'];
    if (!header) return null;
    const match = BEARER.exec(header);
    if (!match?.[1]) return null;
    return this.#byDigest.get(digest(match[1])) ?? null;
  }
}

/** Tells routes that only see the request (`/openapi.json`) who its caller is. */
export function rememberCaller(req: IncomingRequest, caller: Caller): void {
  requestCallers.set(req, caller);
}

/** A `/files` request the caller's scope does not cover: 403 before anything is read or written. */
export function checkFilesScope(caller: Caller, method: string): void {
  const download = method === 'GET' || method === 'HEAD';
  if (download ? caller.mayDownload : caller.mayUpload) return;
  const jobs = download ? DOWNLOAD_JOBS : UPLOAD_JOBS;
  throw new HttpError(403, `The token "${caller.name}" may not ${download ? 'download' : 'upload or remove'} files: its scope includes none of the Jobs that use them (${jobs.join(', ')})`);
}

/** The caller's tag for a door, `console` when the request comes from the web console. */
export function tagFor(caller: Caller, req: IncomingRequest, door: 'http' | 'sse'): CallerTag {
  return req.headers[CONSOLE_HEADER] === 'console' ? caller.tags.console : caller.tags[door];
}
