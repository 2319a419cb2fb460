// Runs on every HTTP front end.
import t from 'tap';
import { DEFAULT_CAPABILITIES } from '../../app/default-capabilities.js';
import { startTestService } from '../helpers/service.js';
import { testJobs } from '../helpers/test-jobs.js';

const capabilities = [...DEFAULT_CAPABILITIES, testJobs];

// One service for every test here (a 4 KiB JSON body limit, which only the first one reaches).
const svc = await startTestService(t, { capabilities, config: { service: { json_body_limit_bytes: 4096 } } });

t.test('envelope and argument rules', async (t) => {
  const post = (path: string, body: string | undefined, headers: Record<string, string> = {}) =>
    svc.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body }) });

  const good = await post('/jobs/echo', JSON.stringify({ arguments: { text: 'hi' } }));
  t.equal(good.status, 200);
  t.same(await good.json(), { answer: { text: 'hi', times: 1 }, success: true, metadata: {} }, 'defaults are filled');

  const empty = await post('/jobs/version', undefined);
  t.equal(empty.status, 200, 'an empty body means empty arguments');

  const cases: Array<[string, string, RegExp]> = [
    ['extra top-level field', JSON.stringify({ arguments: {}, extra: 1 }), /extra/],
    ['arguments not an object', JSON.stringify({ arguments: [1, 2] }), /arguments/],
    ['arguments a string', JSON.stringify({ arguments: 'x' }), /arguments/],
    ['body an array', '[]', /object/],
    ['body a string', '"hello"', /object/],
    ['malformed JSON', '{"arguments": {', /Invalid JSON/],
    ['too deep', `{"arguments":{"text":${'['.repeat(200)}${']'.repeat(200)}}}`, /deeper/],
    ['missing required argument', JSON.stringify({ arguments: {} }), /text/],
    ['wrong argument type', JSON.stringify({ arguments: { text: 5 } }), /text/],
    ['extra argument', JSON.stringify({ arguments: { text: 'a', nope: 1 } }), /nope/],
    ['constraint violated', JSON.stringify({ arguments: { text: 'a', times: 0 } }), /times/],
    ['target not configured', JSON.stringify({ arguments: {}, target: 'http://127.0.0.1:9' }), /not one of the configured targets/],
  ];
  for (const [what, body, pattern] of cases) {
    const res = await post('/jobs/echo', body);
    t.equal(res.status, 422, what);
    const detail = ((await res.json()) as { detail: unknown }).detail;
    t.match(JSON.stringify(detail), pattern, `${what}: detail explains`);
    const events = await post('/jobs/echo/events', body);
    t.equal(events.status, 422, `${what} (events)`);
    await events.arrayBuffer();
  }

  const big = await post('/jobs/echo', JSON.stringify({ arguments: { text: 'x'.repeat(10_000) } }));
  t.equal(big.status, 413, 'a body over the JSON limit');
  t.match(((await big.json()) as { detail: string }).detail, /exceeds the limit of 4096 bytes/);

  const badLength = await svc.fetch('/jobs/echo', { method: 'POST', headers: { 'content-length': 'abc' }, body: '{}' }).catch(() => null);
  if (badLength) t.not(badLength.status, 200, 'an invalid Content-Length is refused');

  const get = await svc.fetch('/jobs/echo');
  t.equal(get.status, 405, 'GET on a Job route');

  const unknown = await post('/jobs/nope', '{}');
  t.equal(unknown.status, 404);
  t.same(await unknown.json(), { detail: 'Unknown job', unknown_job: { name: 'nope', closest: ['open'] } });
});

t.test('an unknown Job keeps the spec\'s detail and names the closest Jobs beside it', async (t) => {
  for (const path of ['/jobs/ehco', '/jobs/ehco/events']) {
    const res = await svc.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    t.equal(res.status, 404, path);
    t.same(await res.json(), { detail: 'Unknown job', unknown_job: { name: 'ehco', closest: ['echo'] } }, path);
  }
});

t.test('a body without the arguments envelope gets a 422 that names the fix', async (t) => {
  for (const path of ['/jobs/echo', '/jobs/echo/events']) {
    const res = await svc.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'hi', times: 2 }) });
    t.equal(res.status, 422, path);
    t.same(await res.json(), {
      detail: [{ loc: ['body', 'arguments'], type: 'missing_arguments_envelope', msg: 'The Job\'s parameters go inside "arguments": send {"arguments": {"text": ..., "times": ...}} instead of {"text": ..., "times": ...} (the body\'s top level takes only "arguments" and "target")' }],
    }, path);
  }
  const targetOnly = await svc.fetch('/jobs/version', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ target: 'http://127.0.0.1:9' }) });
  t.match(await targetOnly.json(), { detail: /not one of the configured targets/ }, 'a body with only target keeps its own answer');
  t.equal(targetOnly.status, 422);
});

t.test('business failures are HTTP 200 with the exception text', async (t) => {
  const res = await svc.call('explode');
  t.equal(res.status, 200);
  t.same(res.body, { answer: "KeyError: 'missing-thing'", success: false, metadata: {} });
  const malformed = await svc.call('malformed');
  t.equal(malformed.status, 200);
  t.equal(malformed.body.success, false);
  t.match(malformed.body.answer, /produced no result/);
});

t.test('the service keeps answering after a storm of bad requests', async (t) => {
  const bodies = ['{', '[]', 'null', '{"arguments":null}', '\u0000', '{"arguments":{"text":"\ud800"}}'];
  await Promise.all(bodies.map((b) => svc.fetch('/jobs/echo', { method: 'POST', body: b }).then((r) => r.arrayBuffer())));
  const health = await svc.fetch('/health');
  t.equal(health.status, 200);
});
