import type { JobRegistry } from './registry.js';

/**
 * Where a Job call came in, as the audit log names it (`console`: the web console's HTTP calls;
 * `agent`: a tool call of an Agent turn, on behalf of the token that started the turn).
 */
export type AuditTransport = 'http' | 'sse' | 'mcp' | 'console' | 'agent';

/**
 * Who makes a call: the name of the bearer token it came with (`service` for `service.token`,
 * `anonymous` on an open service) and the door it used. Made once per token and door, never per
 * call; the token's value is never part of it, so nothing that logs or answers a caller can leak it.
 */
export interface CallerTag {
  readonly token: string;
  readonly transport: AuditTransport;
  /** The Jobs the token may call (the registry, or its view for a scoped token): what work done on its behalf may call. */
  readonly scope: JobRegistry;
}

/** The name `service.token` is known by in the audit log and the console. */
export const SERVICE_TOKEN_NAME = 'service';
/** The caller of an open service (no token configured). */
export const ANONYMOUS_NAME = 'anonymous';

/** One tag per door for a token, made once. */
export function tagsOf(token: string, scope: JobRegistry): Readonly<Record<AuditTransport, CallerTag>> {
  const tag = (transport: AuditTransport): CallerTag => Object.freeze({ token, transport, scope });
  return Object.freeze({ http: tag('http'), sse: tag('sse'), mcp: tag('mcp'), console: tag('console'), agent: tag('agent') });
}
