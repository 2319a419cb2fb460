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

function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url.host);
  } catch {
    return false;
  }
}

/** The problem with a request's Origin or Host, or undefined when there is none. */
export type RebindingGuard = (headers: IncomingRequest['headers']) => string | undefined;

/**
 * The guard against DNS rebinding: a page on another site must not reach a loopback service. An
 * Origin must be a loopback one or one of `allowedOrigins` (fixed for the service's life); the Host
 * must name loopback when the service listens on loopback only.
 */
export function rebindingGuard(loopbackOnly: boolean, allowedOrigins: readonly string[]): RebindingGuard {
  const originAllowed = remembered((origin) => isLoopbackOrigin(origin) || allowedOrigins.includes(origin));
  const hostAllowed = remembered(isLoopbackHost);
  return (headers) => {
    const origin = headers['origin'];
    if (origin !== undefined && !originAllowed(origin)) return `Origin not allowed: ${origin}`;
    const host = headers['host'];
    if (loopbackOnly && host !== undefined && !hostAllowed(host)) return `Host not allowed: ${host}`;
    return undefined;
  };
}
