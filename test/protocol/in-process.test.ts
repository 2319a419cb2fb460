import t from 'tap';
import { parseSse, startTestService } from '../helpers/service.js';

// Routes called in this process, without a socket: the same answers as over HTTP.
const svc = await startTestService(t);
const auth = { authorization: `Bearer ${svc.token}`, 'content-type': 'application/json' };

t.test('JSON, SSE, auth and 404 answer in process as they do over HTTP', async (t) => {
  const health = await svc.request({ path: '/health', headers: auth });
  t.equal(health.status, 200);
  t.same(health.json(), { answer: { running: true }, success: true, metadata: {} });

  const version = await svc.request({ method: 'POST', path: '/jobs/version', headers: auth, body: '{"arguments":{}}' });
  const overHttp = await svc.call('version');
  t.same(version.json(), overHttp.body, 'the same JobResponse as over a socket');

  const events = await svc.request({ method: 'POST', path: '/jobs/version/events', headers: auth, body: '{"arguments":{}}' });
  t.equal(events.status, 200);
  t.match(events.headers['content-type'], /text\/event-stream/);
  t.match(parseSse(events.text()).at(-1), { kind: 'result', success: true, answer: overHttp.body.answer });

  const noToken = await svc.request({ path: '/jobs' });
  t.equal(noToken.status, 401);
  t.same(noToken.json(), { detail: 'Invalid bearer token' });
  const unknown = await svc.request({ method: 'POST', path: '/jobs/nope', headers: auth, body: '{}' });
  t.same([unknown.status, (unknown.json() as { detail: unknown }).detail], [404, 'Unknown job']);
  t.match(unknown.json(), { unknown_job: { name: 'nope', closest: [] } });
  const invalid = await svc.request({ method: 'POST', path: '/jobs/shell', headers: auth, body: '{"arguments":{"command":"true","timeout":0}}' });
  t.equal(invalid.status, 422);
});
