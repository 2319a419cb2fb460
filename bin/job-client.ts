import { CallError } from './cli-errors.js';
import type { Connection } from './connection.js';
import type { JobDescriptor, JobResponse } from '../schemas/job-response.js';
import type { JobReply } from '../schemas/job-answers.js';
import type { WithJsonSchemas } from '../schemas/json-schema.js';
import type { StreamEvent } from '../schemas/events.js';
import { readSseEvents } from '../protocol/sse-reader.js';

/** The descriptor fields (`GET /jobs`) the CLI reads; it also describes a Task's inputs with them. */
export type JobInfo = Pick<WithJsonSchemas<JobDescriptor>, 'name' | 'description' | 'input_schema'>;

/** Request headers with the connection's bearer token (when it has one). */
export function headers(conn: Connection, extra: Record<string, string> = {}): Record<string, string> {
  return { ...extra, ...(conn.token ? { authorization: `Bearer ${conn.token}` } : {}) };
}

/** One request; a network failure becomes a CallError naming the address and the cause. */
export async function request(conn: Connection, path: string, init: RequestInit): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(`${conn.url}${path}`, init);
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new CallError(`cannot reach ${conn.url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
  // A refused token is the commonest first-day failure: say where the token is looked for.
  if (response.status === 401) {
    await response.body?.cancel().catch(() => undefined);
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

/** Throws a CallError with the status and detail unless the response is a 200. */
async function expectOk(response: Response): Promise<void> {
  if (response.status === 200) return;
  const text = await response.text().catch(() => '');
  let detail: unknown = text.slice(0, 2000);
  try {
    detail = (JSON.parse(text) as { detail?: unknown }).detail ?? detail;
  } catch {
    // Not JSON: show the text as it came.
  }
  throw new CallError(`HTTP ${response.status}: ${describeDetail(detail)}`);
}

/** The JobResponse of a 200 answer; a CallError with the status and detail otherwise. */
export async function readAnswer(response: Response): Promise<JobResponse> {
  await expectOk(response);
  const body = (await response.json().catch(() => undefined)) as JobResponse | undefined;
  if (typeof body?.success !== 'boolean') throw new CallError('the service answered without a JobResponse');
  return body;
}

/** The public Jobs of the service (`GET /jobs`). */
export async function fetchCatalog(conn: Connection): Promise<JobInfo[]> {
  const body = await readAnswer(await request(conn, '/jobs', { headers: headers(conn, { accept: 'application/json' }) }));
  return (body.answer as { items: JobInfo[] }).items;
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
  if (!response.body) return;
  try {
    yield* readSseEvents(response.body as unknown as AsyncIterable<Uint8Array>);
  } catch (err) {
    throw new CallError(`the event stream broke: ${(err as Error).message}`);
  }
}
