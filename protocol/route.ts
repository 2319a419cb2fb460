import type { IncomingRequest, ResponseSink } from './http.js';

/**
 * An HTTP route outside the Job routes (`/files`, `/proxy`, the web console ...).
 * `prefix` matches the path itself and everything below it (`/files`, `/files/...`).
 * Whether a bearer token is needed is decided by the front door from the path alone (spec:
 * Authentication 1), never by the route.
 */
export interface Route {
  readonly prefix: string;
  handle(req: IncomingRequest, res: ResponseSink): Promise<void>;
}

export function matchesPrefix(path: string, prefix: string): boolean {
  if (prefix === '/') return true;
  return path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`);
}
