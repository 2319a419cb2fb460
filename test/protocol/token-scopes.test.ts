import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parseSse, startTestService, TEST_TOKEN, waitFor, type TestService } from '../helpers/service.js';
import type { AuditRecord } from '../../core/audit.js';

const READER = 'reader-token-0123456789abcdef';
const AGENT = 'agent-token-0123456789abcdef';
const READER_JOBS = ['version', 'list_task_statuses', 'list_task_ids'];
const AGENT_JOBS = ['submit', 'await_task', 'status', 'get_task_context'];
const tokens = [
  { name: 'reader', token: READER, jobs: READER_JOBS },
  { name: 'agent', token: AGENT, jobs: AGENT_JOBS },
];

async function scopedService(t: Test): Promise<TestService> {
  return startTestService(t, { config: { service: { tokens } } });
}

const as = (token: string, init: RequestInit = {}): RequestInit => ({ ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });
const post = (svc: TestService, token: string, path: string, args: Record<string, unknown> = {}) => fetch(`${svc.url}${path}`, as(token, { method: 'POST', body: JSON.stringify({ arguments: args }) }));

/** The audit log's records, once `ready` holds for them (it is written just after each call). */
async function auditRecords(svc: TestService, ready: (records: AuditRecord[]) => boolean): Promise<AuditRecord[]> {
  const file = join(svc.workspace, '.taskyard', 'audit.jsonl');
  return waitFor(async () => {
    const text = await readFile(file, 'utf8').catch(() => '');
    const records = text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as AuditRecord);
    return ready(records) ? records : null;
  }, 10_000, 'the audit log to hold the calls');
}

t.test('a scoped token sees only its Jobs in GET /jobs and /openapi.json; the service token sees all', async (t) => {
  const svc = await scopedService(t);
  const reader = (await (await fetch(`${svc.url}/jobs`, as(READER))).json()) as { answer: { items: Array<{ name: string }>; total: number }; metadata: Record<string, unknown> };
  t.same(reader.answer.items.map((i) => i.name).sort(), [...READER_JOBS].sort(), 'exactly its Jobs');
  t.equal(reader.answer.total, READER_JOBS.length);
  t.same(reader.metadata, { token: 'reader' }, 'the catalog names the token (never its value)');
  const all = (await (await svc.fetch('/jobs')).json()) as { answer: { items: Array<{ name: string }> }; metadata: Record<string, unknown> };
  t.ok(all.answer.items.some((i) => i.name === 'shell'), 'the service token still sees shell');
  t.same(all.metadata, { token: 'service' });

  const doc = (await (await fetch(`${svc.url}/openapi.json`, as(READER))).json()) as { paths: Record<string, unknown> };
  const jobPaths = Object.keys(doc.paths).filter((p) => p.startsWith('/jobs/') && !p.endsWith('/events'));
  t.same(jobPaths.sort(), READER_JOBS.map((j) => `/jobs/${j}`).sort(), 'the OpenAPI document describes only its Jobs');
  const full = (await (await svc.fetch('/openapi.json')).json()) as { paths: Record<string, unknown> };
  t.ok(full.paths['/jobs/shell'], 'the service token reads the whole document');

  const wrong = await fetch(`${svc.url}/jobs`, as('not-a-configured-token-at-all'));
  t.equal(wrong.status, 401, 'an unknown token is still 401');
  t.same(await wrong.json(), { detail: 'Invalid bearer token' });
});

t.test('a Job outside the scope is refused over HTTP JSON and SSE before anything runs, and audited', async (t) => {
  const svc = await scopedService(t);
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-scope-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const marker = join(dir, 'ran');

  const json = await post(svc, READER, '/jobs/shell', { command: `touch ${marker}` });
  t.equal(json.status, 403, 'HTTP JSON: 403');
  const body = (await json.json()) as { detail: string };
  t.match(body.detail, /token "reader" may not call shell: its scope does not include it/);
  const sse = await post(svc, READER, '/jobs/shell/events', { command: `touch ${marker}` });
  t.equal(sse.status, 403, 'SSE: 403 before the stream starts');
  t.match(((await sse.json()) as { detail: string }).detail, /scope does not include it/);
  const submit = await post(svc, READER, '/jobs/submit', { task: 'demo', x: 1, y: 2 });
  t.equal(submit.status, 403, 'submit outside the scope is refused too');
  await submit.arrayBuffer();

  const ids = await svc.call('list_task_ids');
  t.same(ids.body.answer, [], 'no Task was created');
  t.notOk(existsSync(marker), 'the shell command never ran');

  const unknown = await post(svc, READER, '/jobs/no_such_job');
  t.equal(unknown.status, 404, 'a Job that does not exist stays 404 Unknown job');
  t.same(await unknown.json(), { detail: 'Unknown job', unknown_job: { name: 'no_such_job', closest: [] } });
  const typo = await post(svc, READER, '/jobs/shel');
  t.equal(typo.status, 404);
  t.same(((await typo.json()) as { unknown_job: { closest: string[] } }).unknown_job.closest, [], 'suggestions come from the caller\'s scope only (shell is outside it)');

  const inScope = await post(svc, READER, '/jobs/version');
  t.equal(inScope.status, 200);
  t.equal(((await inScope.json()) as { success: boolean }).success, true, 'its own Jobs work');
  const streamed = await post(svc, READER, '/jobs/version/events');
  t.equal(parseSse(await streamed.text()).at(-1)?.['kind'], 'result', 'over SSE as well');

  const records = await auditRecords(svc, (r) => r.filter((x) => x.token === 'reader').length >= 5);
  const reader = records.filter((r) => r.token === 'reader').map(({ transport, job, outcome }) => ({ transport, job, outcome }));
  t.same(reader, [
    { transport: 'http', job: 'shell', outcome: 'refused' },
    { transport: 'sse', job: 'shell', outcome: 'refused' },
    { transport: 'http', job: 'submit', outcome: 'refused' },
    { transport: 'http', job: 'version', outcome: 'ok' },
    { transport: 'sse', job: 'version', outcome: 'ok' },
  ]);
  t.ok(records.some((r) => r.token === 'service' && r.job === 'list_task_ids'), 'the service token is audited by its name');
  t.ok(records.every((r) => typeof r.time === 'string' && !Number.isNaN(Date.parse(r.time))), 'every line has its time');
  const text = await readFile(join(svc.workspace, '.taskyard', 'audit.jsonl'), 'utf8');
  for (const secret of [READER, AGENT, TEST_TOKEN]) t.notOk(text.includes(secret), 'no token value is ever logged');
});

t.test('the console is audited as such; a submit names its Task and its submitter', async (t) => {
  const svc = await scopedService(t);
  const res = await fetch(`${svc.url}/jobs/submit`, as(AGENT, { method: 'POST', headers: { 'x-taskyard-client': 'console' }, body: JSON.stringify({ arguments: { task: 'demo', x: 2, y: 3 } }) }));
  const handle = ((await res.json()) as { answer: { task_id: string; run_id: string } }).answer;
  const waited = await post(svc, AGENT, '/jobs/await_task', { task_id: handle.task_id, timeout: 30 });
  const done = (await waited.json()) as { success: boolean; metadata: { done: boolean } };
  t.same([done.success, done.metadata.done], [true, true], 'await_task answers the finished run');
  const records = await auditRecords(svc, (r) => r.filter((x) => x.token === 'agent').length >= 2);
  t.same(
    records.filter((r) => r.token === 'agent').map(({ transport, job, task_id, outcome }) => ({ transport, job, task_id, outcome })),
    [
      { transport: 'console', job: 'submit', task_id: handle.task_id, outcome: 'ok' },
      { transport: 'http', job: 'await_task', task_id: handle.task_id, outcome: 'ok' },
    ],
  );
  const page = await svc.call('query_task_statuses', {});
  t.same(page.body.metadata, { submitted_by: { [handle.task_id]: 'agent' } }, 'query_task_statuses says who submitted it');
  const status = await post(svc, AGENT, '/jobs/status', { task_id: handle.task_id });
  const statusBody = (await status.json()) as { answer: Record<string, unknown>; metadata: Record<string, unknown> };
  t.same(statusBody.metadata, { submitted_by: 'agent' }, 'so does status');
  t.notOk('submitted_by' in statusBody.answer, 'the TaskStatus itself has no new field');
});

t.test('/files follows the Jobs that use it', async (t) => {
  const svc = await scopedService(t);
  await writeFile(join(svc.workspace, 'hello.txt'), 'hello');
  const readerGet = await fetch(`${svc.url}/files?path=hello.txt`, as(READER));
  t.equal(readerGet.status, 403, 'no Job of the reader reads files: no download');
  t.match(((await readerGet.json()) as { detail: string }).detail, /may not download files/);
  const agentGet = await fetch(`${svc.url}/files?path=hello.txt`, as(AGENT));
  t.equal(agentGet.status, 200, 'a token that may be told of artifacts downloads them');
  t.equal(await agentGet.text(), 'hello');
  const upload = await fetch(`${svc.url}/files`, as(AGENT, { method: 'POST', headers: { 'x-file-name': 'a.txt', 'content-type': 'application/octet-stream' }, body: 'data' }));
  t.equal(upload.status, 403, 'no Job of the agent consumes uploads: no upload');
  t.match(((await upload.json()) as { detail: string }).detail, /may not upload or remove files/);
  t.notOk(existsSync(join(svc.workspace, 'tmp')), 'nothing was staged');
});

t.test('configuration: Job names are checked, values may come from a file, every token differs', async (t) => {
  await t.rejects(
    startTestService(t, { config: { service: { tokens: [{ name: 'a', token: READER, jobs: ['version'] }, { name: 'b', token: AGENT, jobs: ['shel'] }] } } }),
    { name: 'ConfigError', message: 'service.tokens[1].jobs: no Job named "shel"' },
  );
  await t.rejects(startTestService(t, { config: { service: { tokens: [{ name: 'a', token: TEST_TOKEN, jobs: ['version'] }] } } }), {
    name: 'ConfigError',
    message: /service\.tokens\[0\]\.token: the same value as another token/,
  });
  await t.rejects(startTestService(t, { config: { service: { tokens: [{ name: 'service', token: READER, jobs: ['version'] }] } } }), { message: /"service" is reserved/ });
  await t.rejects(startTestService(t, { config: { service: { tokens: [{ name: 'a', jobs: ['version'] }] } } }), { message: 'service.tokens[0]: give exactly one of token and token_file' });
  await t.rejects(startTestService(t, { token: null, config: { service: { tokens } } }), { message: /scoped tokens need a service token/ });

  const dir = await mkdtemp(join(tmpdir(), 'taskyard-token-file-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'reader.token');
  await writeFile(file, `${READER}\n`, { mode: 0o600 });
  const svc = await startTestService(t, { config: { service: { tokens: [{ name: 'reader', token_file: file, jobs: ['*'] }] } } });
  const res = await fetch(`${svc.url}/jobs`, as(READER));
  const body = (await res.json()) as { answer: { items: unknown[] }; metadata: Record<string, unknown> };
  t.same(body.metadata, { token: 'reader' }, 'the token read from its file is accepted');
  t.ok(body.answer.items.length > 10, '["*"] is every Job');
});

t.test('forwarding keeps the scope: a target reached through this service shows and runs only the Jobs of the token', async (t) => {
  const b = await startTestService(t);
  const a = await startTestService(t, { config: { targets: [{ address: b.url, token: b.token }], service: { tokens } } });
  const catalog = (await (await fetch(`${a.url}/jobs?target=${encodeURIComponent(b.url)}`, as(READER))).json()) as { answer: { items: Array<{ name: string }>; total: number } };
  t.same(catalog.answer.items.map((i) => i.name).sort(), [...READER_JOBS].sort(), "the target's catalog, cut to the token's Jobs");
  t.equal(catalog.answer.total, READER_JOBS.length);
  const refused = await fetch(`${a.url}/jobs/shell`, as(READER, { method: 'POST', body: JSON.stringify({ arguments: { command: 'true' }, target: b.url }) }));
  t.equal(refused.status, 403, 'a Job outside the scope is refused before it is forwarded');
  await refused.arrayBuffer();
  const forwarded = await fetch(`${a.url}/jobs/version`, as(READER, { method: 'POST', body: JSON.stringify({ arguments: {}, target: b.url }) }));
  t.equal(((await forwarded.json()) as { success: boolean }).success, true, 'its own Jobs are forwarded');
});
