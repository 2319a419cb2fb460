import type { AuditTransport, CallerTag, JobScope } from './job.js';

// The caller's types live beside the JobContext that carries them (core/job.ts).
export type { AuditTransport, CallerTag } from './job.js';

/** The name `service.token` is known by in the audit log and the console. */
export const SERVICE_TOKEN_NAME = 'service';
/** The caller of an open service (no token configured). */
export const ANONYMOUS_NAME = 'anonymous';

/** One tag per door for a token, made once. */
export function tagsOf(token: string, scope: JobScope): Readonly<Record<AuditTransport, CallerTag>> {
  const tag = (transport: AuditTransport): CallerTag => Object.freeze({ token, transport, scope });
  return Object.freeze({ http: tag('http'), sse: tag('sse'), mcp: tag('mcp'), console: tag('console'), agent: tag('agent') });
}
