import { isLoopbackHost } from '../core/loopback.js';
import type { IncomingRequest } from './http.js';

/** The most verdicts each check remembers; past it they start over (a client cycling names cannot grow memory). */
const MAX_REMEMBERED = 256;

/**
 * `judge` with its verdicts remembered per value. Clients send the same Host and Origin on every
 * request, and judging one afresh costs a URL parse and a BlockList check (which builds a
 * SocketAddress): ~7 µs, a sixth of a whole MCP call's CPU (bench/mcp.ts, profiled).
 */
function remembered(judge: (value: string) => boolean): (value: string) => boolean {
  const verdicts = new Map<string, boolean>();
  return (value) => {
    let verdict = verdicts.get(value);
    if (verdict === undefined) {
      verdict = judge(value);
      if (verdicts.size >= MAX_REMEMBERED) verdicts.clear();
      verdicts.set(value, verdict);
    }
    return verdict;
  };
}

/** The `host[:port]` of an http(s) Origin, lower-cased; undefined for anything else (`null`, other schemes). */
function originHost(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.host : undefined;
  } catch {
    return undefined;
  }
}

function isLoopbackOrigin(origin: string): boolean {
  const host = originHost(origin);
  return host !== undefined && isLoopbackHost(host);
}

/** The problem with a request's Origin or Host, or undefined when there is none. */
export type CrossSiteGuard = (headers: IncomingRequest['headers']) => string | undefined;

/**
 * The guard of every route against other sites' pages: a page on another site must not call Jobs,
 * read files or reach MCP, whether the service has a token or not. An Origin (browsers send one
 * with every cross-origin request and every POST) must be a loopback one, one of `allowedOrigins`
 * (fixed for the service's life), or the service's own as the request names it (its Host: the
 * console opened by the machine's name). Against DNS rebinding, the Host must name loopback when
 * the service listens on loopback only (a rebound name is not loopback, so its same-origin pages
 * are refused by this rule too).
 */
export function crossSiteGuard(loopbackOnly: boolean, allowedOrigins: readonly string[]): CrossSiteGuard {
  const originAllowed = remembered((origin) => isLoopbackOrigin(origin) || allowedOrigins.includes(origin));
  const hostAllowed = remembered(isLoopbackHost);
  // Keyed by Origin and Host on two lines (no header value holds a line break): only Origins
  // outside the two rules above get here.
  const sameOrigin = remembered((pair) => {
    const cut = pair.indexOf('\n');
    return originHost(pair.slice(0, cut)) === pair.slice(cut + 1).toLowerCase();
  });
  return (headers) => {
    const host = headers['host'];
    if (loopbackOnly && host !== undefined && !hostAllowed(host)) return `Host not allowed: ${host}`;
    const origin = headers['origin'];
    if (origin !== undefined && !originAllowed(origin) && !(host !== undefined && sameOrigin(`${origin}\n${host}`))) return `Origin not allowed: ${origin}`;
    return undefined;
  };
}

/**
 * True when a request body has the JSON media type. A page on another site can send a POST
 * without asking first (no CORS preflight) only as `text/plain`, a form encoding or without a
 * type; requiring JSON keeps such a request from running a Job on a service without a token,
 * even from a browser that sends no Origin.
 */
export function isJsonBody(headers: IncomingRequest['headers']): boolean {
  return /^application\/json\s*(;|$)/i.test(headers['content-type'] ?? '');
}
