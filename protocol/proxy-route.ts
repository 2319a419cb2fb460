import { HttpError } from '../core/errors.js';
import { makeBearerCheck } from './auth.js';
import { endToEndHeaders } from './hop-headers.js';
import type { IncomingRequest, ResponseSink } from './http.js';
import type { Route } from './route.js';
import { openUpstream, type UpstreamResponse } from './upstream.js';

/** Methods forwarded to an upstream; anything else is refused before a connection is made. */
export const PROXY_METHODS: readonly string[] = Object.freeze(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

export interface ProxyRouteOptions {
  /** Upstream base URLs by proxy name, already validated. */
  upstreams: ReadonlyMap<string, URL>;
  /** This service's bearer token: stripped if a caller sends it, so no upstream ever sees it. */
  token: string | null;
  shutdown: AbortSignal;
}

/** How many rounds of percent-decoding a dot segment may hide behind (`%252e` is `%2e` is `.`). */
const DECODE_ROUNDS = 4;

/**
 * True when any spelling of `rest` names a `.` or `..` segment: URL parsers treat `\` as `/`,
 * and an upstream may decode `%5C`, `%2e` or `%2F` (even twice) before it resolves the path, so
 * the check runs on every decoding round and splits on both separators.
 */
function hasDotSegment(rest: string): boolean {
  let text = rest;
  for (let round = 0; round <= DECODE_ROUNDS; round++) {
    if (text.split(/[/\\]/).some((segment) => segment === '.' || segment === '..')) return true;
    let decoded: string;
    try {
      decoded = decodeURIComponent(text);
    } catch {
      return false; // not decodable any further: what is left was checked above
    }
    if (decoded === text) return false;
    text = decoded;
  }
  return true; // still decoding after every round: nobody needs that, refuse it
}

/** Splits the raw path `/proxy/<name>[/<rest>]`; `rest` keeps its percent-encoding. */
function splitPath(raw: string): { name: string; rest: string } {
  const match = /^\/proxy\/([^/]+)(\/.*)?$/.exec(raw);
  if (!match) throw new HttpError(404, 'Not found: use /proxy/<name>/<path>');
  let name: string;
  try {
    name = decodeURIComponent(match[1]!);
  } catch {
    throw new HttpError(400, 'Malformed percent-encoding in path');
  }
  const rest = match[2] ?? '';
  if (hasDotSegment(rest)) throw new HttpError(400, 'Dot segments are not allowed in proxied paths');
  return { name, rest };
}

/**
 * The upstream URL, checked after the URL parser's own normalisation (the exact path the
 * upstream receives) to lie inside the base path.
 */
function upstreamUrl(base: URL, rest: string, query: string): URL {
  const basePath = base.pathname.endsWith('/') ? base.pathname.slice(0, -1) : base.pathname;
  const url = new URL(`${base.origin}${basePath}${rest}${query ? `?${query}` : ''}`);
  if (url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`) && !(basePath === '' && url.pathname === '/')) {
    throw new HttpError(400, 'The proxied path leaves the upstream\'s base path');
  }
  return url;
}

function hasBody(req: IncomingRequest): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Bodies up to this size (by Content-Length) are read whole and sent in one write. */
const SMALL_BODY = 64 * 1024;

/** Reads a small upstream body whole; null when the upstream broke off. */
async function readSmall(upstream: UpstreamResponse): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of upstream as AsyncIterable<Buffer>) chunks.push(chunk);
    return Buffer.concat(chunks);
  } catch {
    return null;
  }
}

/** Streams the upstream answer to the client; a client that leaves closes the upstream exchange. */
async function relay(upstream: UpstreamResponse, res: ResponseSink, headOnly: boolean): Promise<void> {
  const status = upstream.statusCode;
  const headers = endToEndHeaders(upstream.headers);
  const length = Number(upstream.headers['content-length'] ?? NaN);
  if (!headOnly && length <= SMALL_BODY) {
    // One write with a Content-Length, instead of a chunked stream, for the common small answer.
    const body = await readSmall(upstream);
    // Nothing was sent yet, so a broken small answer can still be reported properly.
    if (!body) throw new HttpError(502, 'Proxy upstream broke off its answer');
    return res.send(status, headers, body);
  }
  const out = res.stream(status, headers);
  try {
    if (!headOnly) {
      for await (const chunk of upstream as AsyncIterable<Uint8Array>) {
        if (!(await out.write(chunk))) return; // client gone
      }
    }
    out.end();
  } catch {
    out.abort(); // the upstream broke off: pass the break on rather than a short, complete body
  } finally {
    upstream.destroy();
  }
}

/**
 * `/proxy/<name>/<path>`: forwards the request to `proxy.<name>.url` + path + query with bodies
 * streamed both ways. The caller's own credentials (Authorization, cookies) go to the upstream;
 * this route sits outside the service's bearer check (spec, Authentication 3).
 */
export function createProxyRoute(opts: ProxyRouteOptions): Route {
  const isServiceToken = opts.token === null ? () => false : makeBearerCheck(opts.token);
  // Repeated Authorization headers arrive joined (`Basic …, Bearer <token>` on uWS): any part
  // that carries the service token drops the whole header.
  const carriesToken = (value: string | string[]) =>
    [value].flat().some((joined) => [joined, ...joined.split(',')].some((part) => isServiceToken({ authorization: part.trim() })));
  return {
    prefix: '/proxy',
    async handle(req, res) {
      const { name, rest } = splitPath(req.rawPath ?? req.path);
      const base = opts.upstreams.get(name);
      if (!base) throw new HttpError(404, `Unknown proxy ${JSON.stringify(name)}`);
      if (!PROXY_METHODS.includes(req.method)) throw new HttpError(405, `Method not allowed; use ${PROXY_METHODS.join(', ')}`);
      const headers = endToEndHeaders(req.headers, (header, value) => header === 'authorization' && carriesToken(value));
      if (req.headers['host']) headers['x-forwarded-host'] = req.headers['host'];
      headers['x-forwarded-prefix'] = `/proxy/${encodeURIComponent(name)}`;
      const signal = AbortSignal.any([req.signal, opts.shutdown]);
      let upstream: UpstreamResponse;
      try {
        upstream = await openUpstream(upstreamUrl(base, rest, req.query), {
          method: req.method,
          headers,
          ...(hasBody(req) ? { body: req.body() } : {}),
          signal,
        });
      } catch (err) {
        if (req.signal.aborted) return; // the client left; nobody reads an answer
        throw new HttpError(502, `Proxy upstream ${JSON.stringify(name)} is unreachable: ${(err as Error).message}`);
      }
      await relay(upstream, res, req.method === 'HEAD');
    },
  };
}
