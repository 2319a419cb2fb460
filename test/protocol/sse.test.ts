// Runs on every HTTP front end.
import { request } from 'node:http';
import t from 'tap';
import { DEFAULT_CAPABILITIES } from '../../app/default-capabilities.js';
import { startTestService, waitFor } from '../helpers/service.js';
import { observed, testJobs } from '../helpers/test-jobs.js';

const capabilities = [...DEFAULT_CAPABILITIES, testJobs];

// One service for every test that needs no fresh one of its own (each uses names of its own).
const svc = await startTestService(t, { capabilities });

t.test('framing: event line equals data.kind, result last, then the stream closes', async (t) => {
  const res = await svc.fetch('/jobs/chatty/events', { method: 'POST', body: JSON.stringify({ arguments: { count: 3 } }) });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/event-stream/);
  const raw = await res.text();
  const blocks = raw.split('\n\n').filter(Boolean);
  t.equal(blocks.length, 4);
  for (const block of blocks) {
    const [eventLine, dataLine, ...rest] = block.split('\n');
    t.same(rest, [], 'exactly two lines per frame');
    const data = JSON.parse(dataLine!.slice('data: '.length)) as { kind: string };
    t.equal(eventLine, `event: ${data.kind}`);
  }
  const events = blocks.map((b) => JSON.parse(b.split('\n')[1]!.slice(6)) as Record<string, unknown>);
  t.same(events.map((e) => e['kind']), ['progress', 'progress', 'progress', 'result']);
  t.same(events[3], { kind: 'result', answer: 3, success: true, metadata: {} });
  t.ok(raw.endsWith('\n\n'));
});

t.test('an exception after streaming began becomes a failed result', async (t) => {
  const { status, events } = await svc.events('explode');
  t.equal(status, 200);
  t.same(events.map((e) => e['kind']), ['progress', 'result']);
  t.same(events[1], { kind: 'result', answer: "KeyError: 'missing-thing'", success: false, metadata: {} });
});

t.test('a Job that produces no result ends with the spec text', async (t) => {
  const { events } = await svc.events('malformed');
  t.same(events, [{ kind: 'result', answer: 'Stream produced no terminal result', success: false, metadata: {} }]);
});

t.test('a slow reader gets every event in order (backpressure, nothing dropped)', async (t) => {
  const count = 400;
  const res = await svc.fetch('/jobs/chatty/events', { method: 'POST', body: JSON.stringify({ arguments: { count, pad: 16_384 } }) });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let reads = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (++reads % 50 === 0) await new Promise((r) => setImmediate(r)); // let the server feel a slow client
  }
  const kinds = text.split('\n\n').filter(Boolean).map((b) => JSON.parse(b.split('\n')[1]!.slice(6)) as { kind: string; name?: string });
  t.equal(kinds.length, count + 1);
  t.equal(kinds[count - 1]?.name?.slice(0, 8), `step ${count - 1}`.slice(0, 8));
  t.equal(kinds.at(-1)?.kind, 'result');
});

t.test('a client disconnect aborts the Job invocation', async (t) => {
  const before = { started: observed.started, aborted: observed.aborted };
  const url = new URL('/jobs/hang/events', svc.url);
  const req = request(url, { method: 'POST', headers: { authorization: `Bearer ${svc.token}`, 'content-type': 'application/json' } });
  req.on('error', () => undefined);
  req.end('{}');
  await waitFor(() => observed.started > before.started, 5000, 'the Job to start');
  req.destroy();
  await waitFor(() => observed.aborted > before.aborted, 5000, 'the Job to see the abort');
  t.pass('aborted');
});
