import t from 'tap';
import { DEFAULT_CAPABILITIES } from '../../app/default-capabilities.js';
import { startTestService } from '../helpers/service.js';
import { testJobs } from '../helpers/test-jobs.js';
import { connectMcp } from '../helpers/mcp-client.js';
import type { JobCatalog } from '../../schemas/job-response.js';
import { OPEN_SERVICE_NOTE } from '../../core/errors.js';

const capabilities = [...DEFAULT_CAPABILITIES, testJobs];

async function catalogNames(svc: { fetch: (p: string) => Promise<Response> }): Promise<string[]> {
  const res = await svc.fetch('/jobs');
  const body = (await res.json()) as { answer: JobCatalog };
  t.equal(body.answer.total, body.answer.items.length, 'total counts the items');
  return body.answer.items.map((i) => i.name);
}

t.test('with a token every served Job is public, with its schemas', async (t) => {
  const svc = await startTestService(t, { capabilities });
  const res = await svc.fetch('/jobs');
  const body = (await res.json()) as { answer: JobCatalog; success: boolean };
  t.equal(body.success, true);
  const echo = body.answer.items.find((i) => i.name === 'echo');
  t.ok(echo, 'echo is listed');
  t.equal(echo?.description, 'Answers its arguments.');
  t.match(echo?.input_schema, { type: 'object', properties: { text: { type: 'string' } }, required: ['text', 'times'] });
  t.match(echo?.output_schema, { type: 'object', properties: { answer: {}, success: { type: 'boolean' }, metadata: { type: 'object' } } });
  t.ok((await catalogNames(svc)).includes('version'));
});

t.test('without a token only requires_auth=false Jobs are public', async (t) => {
  const svc = await startTestService(t, { capabilities, token: null, config: { jobs: { version: { requires_auth: false } } } });
  t.same((await catalogNames(svc)).sort(), ['open', 'version']);
  t.equal((await svc.call('open')).body.answer, 'open');
  t.equal((await svc.call('version')).status, 200);
  const hidden = await svc.call('echo', { text: 'x' });
  t.equal(hidden.status, 404);
  t.same(hidden.body, { detail: 'Unknown job', unknown_job: { name: 'echo', closest: [], reason: OPEN_SERVICE_NOTE } }, 'a Job the open service hides: the 404 says why');
  const catalog = await svc.fetch('/jobs');
  t.match(await catalog.json(), { metadata: { note: OPEN_SERVICE_NOTE } }, 'the catalog of an open service says why Jobs are missing');
  const mcp = await connectMcp(t, svc.url, null);
  const tools = await mcp.listTools();
  t.same(tools.tools.map((x) => x.name).sort(), ['open', 'version']);
});

t.test('enable_serve=false hides a Job everywhere; enable_stream=false closes only /events', async (t) => {
  const svc = await startTestService(t, { capabilities, config: { jobs: { echo: { enable_serve: false } } } });
  t.notOk((await catalogNames(svc)).includes('echo'));
  const call = await svc.call('echo', { text: 'x' });
  t.equal(call.status, 404);
  t.same(call.body, { detail: 'Unknown job', unknown_job: { name: 'echo', closest: [] } });
  const quietJson = await svc.call('quiet');
  t.equal(quietJson.body.answer, 'quiet');
  const quietEvents = await svc.fetch('/jobs/quiet/events', { method: 'POST', body: '{}' });
  t.equal(quietEvents.status, 404);
  t.same(await quietEvents.json(), { detail: 'Unknown job', unknown_job: { name: 'quiet', closest: [], reason: 'quiet does not stream (enable_stream is false): call POST /jobs/quiet, without /events' } });
  const mcp = await connectMcp(t, svc.url, svc.token);
  const names = (await mcp.listTools()).tools.map((x) => x.name);
  t.notOk(names.includes('echo'));
  t.ok(names.includes('quiet'), 'a Job without streaming is still an MCP tool');
});

t.test('an unknown Job name in the jobs section stops the start', async (t) => {
  await t.rejects(startTestService(t, { capabilities, config: { jobs: { nope: { enable_serve: false } } } }), /jobs\.nope: no Job of that name/);
});
