import { hash, timingSafeEqual } from 'node:crypto';
import type { HeaderMap } from './http.js';

// `/metrics` and `/openapi.json` follow the rule of `/jobs` (they describe the same service).
const PROTECTED = ['/health', '/jobs', '/files', '/mcp', '/metrics', '/openapi.json'];
/** Each prefix with its trailing slash, made once: this runs on every request. */
const PROTECTED_BELOW = PROTECTED.map((p) => `${p}/`);
const BEARER = /^Bearer[ \t]+(.+?)[ \t]*$/i;

/** Spec, Authentication 1: the root and every subpath of these prefixes need the bearer token. */
export function isProtectedPath(path: string): boolean {
  for (let i = 0; i < PROTECTED.length; i++) if (path === PROTECTED[i] || path.startsWith(PROTECTED_BELOW[i]!)) return true;
  return false;
}

// One-shot hashing: about twice as fast as a Hash object, and this runs on every request.
const digest = (s: string): Buffer => hash('sha256', s, 'buffer') as unknown as Buffer;

/**
 * Constant-time bearer check. Both sides are hashed first so neither the content nor the length
 * of the configured token leaks through timing.
 */
export function makeBearerCheck(token: string): (headers: HeaderMap) => boolean {
  const expected = digest(token);
  return (headers) => {
    const header = headers['authorization'];
    if (!header) return false;
    const match = BEARER.exec(header);
    if (!match?.[1]) return false;
    return timingSafeEqual(digest(match[1]), expected);
  };
}
