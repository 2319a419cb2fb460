// Runs on every HTTP front end.
import t from 'tap';
import { DEFAULT_CAPABILITIES } from '../../app/default-capabilities.js';
import { startTestService, TEST_TOKEN } from '../helpers/service.js';
import { testJobs } from '../helpers/test-jobs.js';

const capabilities = [...DEFAULT_CAPABILITIES, testJobs];

// One service for every test that needs no fresh one of its own (each uses names of its own).
const svc = await startTestService(t, { capabilities });

t.test('every protected path needs the bearer token', async (t) => {
  const attempts: Array<[string, string, Record<string, string>]> = [
    ['GET', '/health', {}],
    ['GET', '/health/extra', {}],
    ['GET', '/jobs', {}],
    ['GET', '/jobs/', {}],
    ['POST', '/jobs/version', {}],
    ['POST', '/jobs/version/events', {}],
    ['POST', '/jobs/no-such-job', {}],
    ['POST', '/files', {}],
    ['DELETE', '/files?path=tmp/x', {}],
    ['POST', '/mcp', {}],
    ['POST', '/mcp/', {}],
    ['GET', '/%6Aobs', {}], // percent-encoded spelling of /jobs
    ['GET', '/health', { authorization: 'Bearer wrong-token' }],
    ['GET', '/health', { authorization: `Basic ${TEST_TOKEN}` }],
    ['GET', '/health', { authorization: `Bearer ${TEST_TOKEN}x` }],
    ['GET', '/health', { authorization: 'Bearer' }],
  ];
  for (const [method, path, headers] of attempts) {
    const res = await fetch(`${svc.url}${path}`, { method, headers, ...(method === 'POST' ? { body: '{}' } : {}) });
    t.equal(res.status, 401, `${method} ${path} ${JSON.stringify(headers)}`);
    t.same(await res.json(), { detail: 'Invalid bearer token' });
  }
});

t.test('the right token opens the protected paths; the scheme is case-insensitive', async (t) => {
  for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
    const res = await fetch(`${svc.url}/health`, { headers: { authorization: `${scheme} ${TEST_TOKEN}` } });
    t.equal(res.status, 200, scheme);
    t.same(await res.json(), { answer: { running: true }, success: true, metadata: {} });
  }
});

t.test('OPTIONS skips the check; the console and /proxy are outside it', async (t) => {
  for (const path of ['/health', '/jobs', '/jobs/version', '/files', '/mcp']) {
    const res = await fetch(`${svc.url}${path}`, { method: 'OPTIONS' });
    t.equal(res.status, 204, `OPTIONS ${path}`);
  }
  for (const path of ['/', '/index.html', '/proxy/nothing/here']) {
    const res = await fetch(`${svc.url}${path}`);
    t.not(res.status, 401, `GET ${path} is not behind the token`);
    await res.arrayBuffer();
  }
});

t.test('requires_auth=false does not bypass a configured token', async (t) => {
  const res = await fetch(`${svc.url}/jobs/open`, { method: 'POST', body: '{}' });
  t.equal(res.status, 401);
  const authed = await svc.call('open');
  t.same(authed.body, { answer: 'open', success: true, metadata: {} });
});
