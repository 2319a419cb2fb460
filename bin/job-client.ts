import { CallError } from './cli-errors.js';
import type { UnknownJobInfo } from '../core/errors.js';
import type { Connection } from './connection.js';
import type { JobDescriptor, JobResponse } from '../schemas/job-response.js';
import type { JobReply } from '../schemas/job-answers.js';
import type { WithJsonSchemas } from '../schemas/json-schema.js';
import type { StreamEvent } from '../schemas/events.js';
import { readSseEvents } from '../protocol/sse-reader.js';
import { send, type HttpAnswer, type RequestInit } from './http-answer.js';

/** The descriptor fields (`GET /jobs`) the CLI reads; it also describes a Task's inputs with them. */
export type JobInfo = Pick<WithJsonSchemas<JobDescriptor>, 'name' | 'description' | 'input_schema'>;

/** Request headers with the connection's bearer token (when it has one). */
export function headers(conn: Connection, extra: Record<string, string> = {}): Record<string, string> {
  return { ...extra, ...(conn.token ? { authorization: `Bearer ${conn.token}` } : {}) };
}

/** One request; a network failure becomes a CallError naming the address and the cause. */
export async function request(conn: Connection, path: string, init: RequestInit): Promise<HttpAnswer> {
  let response: HttpAnswer;
  try {
    response = await send(`${conn.url}${path}`, init);
  } catch (err) {
    const from = conn.addressHint ? ` (${conn.addressHint})` : '';
    throw new CallError(`cannot reach ${conn.url}${from}: ${(err as { code?: string }).code ?? (err as Error).message}`);
  }
  // A refused token is the commonest first-day failure: say where the token is looked for.
  if (response.status === 401) {
    response.cancel();
    throw new CallError(`HTTP 401: Invalid bearer token\n${conn.tokenHint}`);
  }
  return response;
}

/** Formats the `detail` of an error response: a text, or one line per validation issue. */
function describeDetail(detail: unknown): string {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((issue: { loc?: unknown[]; msg?: string }) => `\n  ${(issue.loc ?? []).filter((p) => p !== 'body').join('.')}: ${issue.msg ?? JSON.stringify(issue)}`)
      .join('');
  }
  return JSON.stringify(detail);
}

/** The lines a 404's `unknown_job` field adds: the closest names, and why a Job is hidden. */
export function unknownJobLines(info: Partial<UnknownJobInfo> | undefined): string[] {
  if (!info || typeof info.name !== 'string') return [];
  const closest = Array.isArray(info.closest) && info.closest.length ? `; did you mean ${info.closest.join(', ')}?` : '';
  return [`no public Job ${JSON.stringify(info.name)} here${closest}`, ...(info.reason ? [info.reason] : [])];
}

/** Throws a CallError with the status and detail unless the response is a 200. */
async function expectOk(response: HttpAnswer): Promise<void> {
  if (response.status === 200) return;
  const text = await response.text().catch(() => '');
  let detail: unknown = text.slice(0, 2000);
  let unknownJob: Partial<UnknownJobInfo> | undefined;
  try {
    const body = JSON.parse(text) as { detail?: unknown; unknown_job?: Partial<UnknownJobInfo> };
    detail = body.detail ?? detail;
    unknownJob = body.unknown_job;
  } catch {
    // Not JSON: show the text as it came.
  }
  throw new CallError([`HTTP ${response.status}: ${describeDetail(detail)}`, ...unknownJobLines(unknownJob)].join('\n'));
}

/** The JobResponse of a 200 answer; a CallError with the status and detail otherwise. */
export async function readAnswer(response: HttpAnswer): Promise<JobResponse> {
  await expectOk(response);
  const body = (await response.json().catch(() => undefined)) as JobResponse | undefined;
  if (typeof body?.success !== 'boolean') throw new CallError('the service answered without a JobResponse');
  return body;
}

/** The service's public Jobs, and its note on Jobs it hides (an open service's). */
export interface Catalog {
  jobs: JobInfo[];
  note: string | undefined;
}

/** The public Jobs of the service (`GET /jobs`). */
export async function fetchCatalog(conn: Connection): Promise<Catalog> {
  const body = await readAnswer(await request(conn, '/jobs', { headers: headers(conn, { accept: 'application/json' }) }));
  const note = body.metadata?.['note'];
  return { jobs: (body.answer as { items: JobInfo[] }).items, note: typeof note === 'string' ? note : undefined };
}

/** `POST /jobs/{name}`: the JobResponse, its answer typed as the Job's (checked by `success` first). */
export async function callJob<N extends string>(conn: Connection, job: N, args: Record<string, unknown>): Promise<JobReply<N>> {
  const init = { method: 'POST', headers: headers(conn, { 'content-type': 'application/json', accept: 'application/json' }), body: JSON.stringify({ arguments: args }) };
  // The one place the wire's answer is taken as the answer the Job declares (its output schema in the catalog).
  return (await readAnswer(await request(conn, `/jobs/${encodeURIComponent(job)}`, init))) as JobReply<N>;
}

/** `POST /jobs/{name}/events`: the events as they arrive, up to and including `result`. */
export async function* streamJob(conn: Connection, job: string, args: Record<string, unknown>): AsyncGenerator<StreamEvent> {
  const init = { method: 'POST', headers: headers(conn, { 'content-type': 'application/json', accept: 'text/event-stream' }), body: JSON.stringify({ arguments: args }) };
  const response = await request(conn, `/jobs/${encodeURIComponent(job)}/events`, init);
  await expectOk(response);
  try {
    yield* readSseEvents(response.body);
  } catch (err) {
    throw new CallError(`the event stream broke: ${(err as Error).message}`);
  }
}
