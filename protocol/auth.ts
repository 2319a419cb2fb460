import { createHash, timingSafeEqual } from 'node:crypto';
import type { HeaderMap } from './http.js';

const PROTECTED = ['/health', '/jobs', '/files', '/mcp'];

/** Spec, Authentication 1: the root and every subpath of these prefixes need the bearer token. */
export function isProtectedPath(path: string): boolean {
  return PROTECTED.some((p) => path === p || path.startsWith(`${p}/`));
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Constant-time bearer check. Both sides are hashed first so neither the content nor the length
 * of the configured token leaks through timing.
 */
export function makeBearerCheck(token: string): (headers: HeaderMap) => boolean {
  const expected = digest(token);
  return (headers) => {
    const header = headers['authorization'];
    if (!header) return false;
    const match = /^Bearer[ \t]+(.+?)[ \t]*$/i.exec(header);
    if (!match?.[1]) return false;
    return timingSafeEqual(digest(match[1]), expected);
  };
}
