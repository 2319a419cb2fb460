import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import type { Pool } from 'undici';
import { isObject } from '../../../core/is-object.js';
import type { SlurmRestSection } from '../../../schemas/config.js';
import { tokenOf } from '../../common/slurm-rest-config.js';

/**
 * One keep-alive connection pool to slurmrestd (TCP or a unix socket), and requests to it as one
 * awaited value each. Keep-alive is not only faster: slurmrestd 22.05 answers a request that says
 * `Connection: close` with a stray header line after the body, which HTTP parsers reject.
 * The token goes in a request header only: it is never logged, answered, or put in a job's environment.
 */

/** Connections to slurmrestd (it serves one request per connection at a time). */
const CONNECTIONS = 8;
/** A token file is read again after this long: sites rotate short-lived tokens (`scontrol token lifespan=`). */
const TOKEN_FRESH_MS = 30_000;
/** Error codes that prove the request never reached slurmrestd (nothing was sent). */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOENT', 'EACCES', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/** A request that got no answer; `sent`: it may have reached slurmrestd (and acted). */
export class RestNoAnswer extends Error {
  readonly sent: boolean;

  constructor(message: string, sent: boolean) {
    super(message);
    this.sent = sent;
  }
}

/** An answer: its status and JSON body (an empty object where the body was not JSON). */
export interface RestAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

export class SlurmRestClient {
  /** Made at the first request (see #poolOf). */
  #pool: Promise<Pool> | undefined;
  readonly #origin: string;
  readonly #socket: string | undefined;
  /** Where it is, as messages name it (never with a token). */
  readonly where: string;
  /** The Slurm user the requests act as. */
  readonly user: string;
  readonly #rest: SlurmRestSection;
  #token: string | null;
  #tokenReadAt = 0;

  constructor(rest: SlurmRestSection) {
    this.#rest = rest;
    this.user = rest.user ?? userInfo().username;
    this.#token = rest.token ?? null;
    this.#socket = rest.socket;
    this.#origin = rest.socket !== undefined ? 'http://localhost' : new URL(rest.url!).origin;
    this.where = `slurmrestd at ${rest.socket ?? this.#origin}`;
  }

  /**
   * The connection pool, made at the first request. undici is loaded only then: every service
   * builds the Slurm executor's module graph, and undici loaded at start added about 7 MB to the
   * idle RSS of a service that never talks to slurmrestd (bench/memory.ts, idle: 93 → 86 MB).
   */
  #poolOf(): Promise<Pool> {
    return (this.#pool ??= import('undici').then(({ Pool }) => new Pool(this.#origin, { connections: CONNECTIONS, ...(this.#socket !== undefined && { socketPath: this.#socket }) })));
  }

  /** Sends one request; rejects with RestNoAnswer when no answer came within `timeoutMs`. */
  async request(method: 'GET' | 'POST' | 'DELETE', path: string, timeoutMs: number, body?: unknown): Promise<RestAnswer> {
    const headers: Record<string, string> = { 'x-slurm-user-name': this.user, accept: 'application/json' };
    const token = await this.#currentToken();
    if (token) headers['x-slurm-user-token'] = token;
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      const pool = await this.#poolOf();
      const answer = await pool.request({
        method,
        path,
        headers,
        ...(body !== undefined && { body: JSON.stringify(body) }),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const text = await answer.body.text();
      return { status: answer.statusCode, body: parseObject(text) };
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? '';
      const sent = !NOT_SENT.has(code) && !NOT_SENT.has(cause);
      throw new RestNoAnswer(`${this.where} did not answer ${method} ${path} (${code || cause || (err as Error).message})`, sent);
    }
  }

  /** The token: the configured one, or the token file's, read again once it is TOKEN_FRESH_MS old. */
  async #currentToken(): Promise<string | null> {
    const file = this.#rest.token_file;
    if (file === undefined || Date.now() - this.#tokenReadAt < TOKEN_FRESH_MS) return this.#token;
    this.#tokenReadAt = Date.now();
    // A file that cannot be read now keeps the last token (the site is replacing it).
    this.#token = await readFile(file, 'utf8').then(tokenOf, () => this.#token);
    return this.#token;
  }

  close(): void {
    void this.#pool?.then((pool) => pool.close()).catch(() => undefined);
  }
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : {};
  } catch {
    return {};
  }
}
