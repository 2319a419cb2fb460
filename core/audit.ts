import type { AuditTransport } from './job.js';

/** How an audited call ended: a JobResponse with success true (`ok`) or false, or refused before running. */
export type AuditOutcome = 'ok' | 'business_failure' | 'refused';

/** One line of the audit log. Never holds a token's value, only its name. */
export interface AuditRecord {
  readonly time: string;
  readonly token: string;
  readonly transport: AuditTransport;
  readonly job: string;
  readonly task_id?: string;
  readonly outcome: AuditOutcome;
}

/** Takes one record; must not wait or throw (it runs on every call). */
export type AuditSink = (record: AuditRecord) => void;

/** The Task a call was about: its `task_id` argument, or the ID a `submit` answered. */
export function taskIdOf(args: Record<string, unknown>, answer: unknown): string | undefined {
  const arg = args['task_id'];
  if (typeof arg === 'string') return arg;
  if (typeof answer === 'object' && answer !== null) {
    const id = (answer as { task_id?: unknown }).task_id;
    if (typeof id === 'string') return id;
  }
  return undefined;
}
