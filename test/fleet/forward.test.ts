// Runs on every HTTP front end.
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import t from 'tap';
import { readSseEvents } from '../../protocol/sse-reader.js';
import { DEFAULT_CAPABILITIES } from '../../app/default-capabilities.js';
import { closedPort, startPlainServer } from '../../harness/http-server.js';
import { startTestService, waitFor, type TestService } from '../helpers/service.js';
import { newProbeState, probeCapability } from './probe-jobs.js';

const MiB = 1024 * 1024;
/** The bodies of the fake target's large answers that only start like a JobResponse. */
const FILLER = 'f'.repeat(2 * MiB);
const LOOKALIKES: Record<string, string> = {
  '/jobs/bytes_after': `{"answer":"${FILLER}","success":true,"metadata":{}}<html>`,
  '/jobs/no_success': `{"answer":"${FILLER}","metadata":{}}`,
  '/jobs/success_text': `{"answer":"${FILLER}","success":"yes","metadata":{}}`,
  '/jobs/control_byte': `{"answer":"${FILLER}\u0001","success":true,"metadata":{}}`,
  '/jobs/unclosed': `{"answer":["${FILLER}"`,
  '/jobs/valid': `{"answer":["${FILLER}",1.5e3,null,{"success":"nested"}],"success":false,"metadata":{"n":-0}}`,
};
const large = (i: number) => `{"answer":"${String(i).repeat(40 * MiB)}","success":true,"metadata":{}}`;
/** What the fake target saw of the streams it was cut off from. */
const fakeSeen = { endlessClosed: false, emptyBytes: 0, emptyClosedEarly: false };

/** Resolves when `res` can take more (drain) or is gone (close), removing both listeners (one left per wait piled up). */
const drainedOrClosed = (res: ServerResponse) =>
  new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.once('drain', done).once('close', done);
  });

/** A fake target answering badly in every way a test below asks for, by the Job named in the path. */
async function fakeTarget(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const mode = req.url ?? '';
  const lookalike = LOOKALIKES[mode];
  if (lookalike !== undefined) return void res.writeHead(200, { 'content-type': 'application/json' }).end(lookalike);
  if (mode === '/jobs/not_json') return void res.writeHead(200, { 'content-type': 'application/json' }).end('<html>');
  if (mode === '/jobs/not_response') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":1}');
  if (mode === '/jobs/crash') return void res.writeHead(500, { 'content-type': 'application/json' }).end('{"detail":"Internal server error"}');
  if (mode === '/jobs/cut') return void res.writeHead(200, { 'content-length': '100' }).write('{"answer"', () => res.destroy());
  if (mode === '/jobs/plain/events') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  if (mode === '/jobs/garbled/events') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end('event: log\ndata: {oops\n\n');
  if (mode === '/jobs/endless/events') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end('event: progress\ndata: {"kind":"progress","name":"x"}\n\n');
  if (mode === '/jobs/large') return void res.writeHead(200, { 'content-type': 'application/json' }).end(large(7));
  if (mode === '/jobs/large_cut') {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(8 * MiB) });
    return void res.write(`{"answer":"${'c'.repeat(4 * MiB)}`, () => res.destroy());
  }
  if (mode === '/jobs/large_html') return void res.writeHead(200, { 'content-type': 'application/json' }).end(`<html>${'h'.repeat(2 * MiB)}`);
  if (mode === '/jobs/endless_line/events') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.on('close', () => (fakeSeen.endlessClosed = true));
    res.write('event: log\ndata: {"kind":"log","content":"');
    const piece = 'x'.repeat(256 * 1024);
    while (!res.destroyed) if (!res.write(piece)) await drainedOrClosed(res);
    return;
  }
  if (mode === '/jobs/empty_lines/events') {
    // At most 128 MiB: an event is refused after 32 MiB on the wire, so the rest is never read.
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const piece = 'data:\n'.repeat(64 * 1024);
    while (!res.destroyed && fakeSeen.emptyBytes < 128 * MiB) {
      fakeSeen.emptyBytes += piece.length;
      if (!res.write(piece)) await drainedOrClosed(res);
    }
    fakeSeen.emptyClosedEarly = res.destroyed;
    return void res.end();
  }
  res.writeHead(404).end('nothing here');
}

/*
 * One fleet serves every test (each test asks its own questions of it; only the probe state is
 * shared, and the tests that read it reset it): A forwards to B and C with their stored tokens;
 * D is configured with a target that is down, B with a wrong token, C under another name, and
 * the fake target above with a stored secret. Each service has its own token.
 */
const probeB = newProbeState();
/** No Task runs in this file: no service starts a Task runner ahead of need (a Node start each). */
const service = { runner_pool_size: 0 };
const b = await startTestService(t, { token: 'token-of-b', capabilities: [...DEFAULT_CAPABILITIES, probeCapability(probeB)], config: { service } });
const c = await startTestService(t, { token: 'token-of-c', capabilities: [...DEFAULT_CAPABILITIES, probeCapability(newProbeState())], config: { service } });
const a = await startTestService(t, {
  token: 'token-of-a',
  capabilities: [...DEFAULT_CAPABILITIES, probeCapability(newProbeState())],
  config: { service, targets: [{ address: `${b.url}/`, token: b.token }, { address: c.url, token: c.token }] },
});
const down = `http://127.0.0.1:${await closedPort()}`;
const fake = await startPlainServer(t, fakeTarget);
const cAsLocalhost = `${c.url}/`.replace('127.0.0.1', 'localhost');
const d = await startTestService(t, {
  config: {
    service,
    targets: [
      { address: down, token: 'x' },
      { address: b.url, token: 'not-the-token-of-b' },
      { address: cAsLocalhost, token: c.token },
      { address: fake.url, token: 'stored-secret' },
    ],
  },
});

/** Rejects when `promise` has not settled within `ms`. */
async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Opens A's `/events` for a forwarded call and yields events as they arrive. */
async function openEvents(svc: TestService, name: string, target: string, signal?: AbortSignal) {
  const res = await svc.fetch(`/jobs/${name}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: {}, target }),
    ...(signal ? { signal } : {}),
  });
  return { res, events: res.ok && res.body ? readSseEvents(res.body as unknown as AsyncIterable<Uint8Array>) : undefined };
}

t.test('JSON calls run on the chosen target with its stored token', async (t) => {
  const onB = await a.call('whoami', {}, { target: b.url });
  t.equal(onB.status, 200);
  t.same(onB.body, { answer: b.workspace, success: true, metadata: { ran_on: b.workspace } });
  const onC = await a.call('whoami', {}, { target: c.url });
  t.equal(onC.body.answer, c.workspace, 'the third service answers for itself');
  t.equal((await a.call('whoami')).body.answer, a.workspace, 'no target runs locally');

  const direct = await b.call('boom');
  const forwarded = await a.call('boom', {}, { target: b.url });
  t.same(forwarded, direct, 'a business failure passes through unchanged');
  t.match(forwarded.body.answer, /^ValueError: probe failure requested$/);

  const invalidDirect = await b.call('strict', { n: 0, extra: 1 });
  const invalid = await a.call('strict', { n: 0, extra: 1 }, { target: b.url });
  t.equal(invalid.status, 422);
  t.same(invalid.body, invalidDirect.body, 'the remote 422 details pass through unchanged');
  t.same(await a.call('strict', { n: 4 }, { target: b.url }), { status: 200, body: { answer: 8, success: true, metadata: {} } });

  const unknown = await a.call('no_such_job', {}, { target: c.url });
  t.same(unknown, { status: 404, body: { detail: 'Unknown job', unknown_job: { name: 'no_such_job', closest: [] } } }, 'the closest names pass through');
  const typo = await a.call('whoam', {}, { target: c.url });
  t.same(typo.body, (await c.call('whoam')).body, 'a remote 404 reaches the caller as the target wrote it');
  t.ok((typo.body as { unknown_job?: { closest: string[] } }).unknown_job?.closest.includes('whoami'), 'with the closest name');
});

t.test('the target must be configured; addresses are compared normalised', async (t) => {
  const port = new URL(b.url).port;
  t.equal((await a.call('whoami', {}, { target: `http://127.0.0.1:${port}/` })).body.answer, b.workspace);
  t.equal((await a.call('whoami', {}, { target: `127.0.0.1:${port}` })).body.answer, b.workspace, 'scheme defaults to http');
  const other = await a.call('whoami', {}, { target: 'http://127.0.0.1:1' });
  t.equal(other.status, 422);
  t.match(other.body, { detail: /not one of the configured targets/ });
  t.equal((await a.call('whoami', {}, { target: `http://user:pw@127.0.0.1:${port}` })).status, 422, 'credentials in the address are refused');
  t.equal((await a.call('whoami', {}, { target: b.url, extra: 1 })).status, 422, 'other envelope fields are refused');
  const sse = await a.fetch('/jobs/whoami/events', { method: 'POST', body: JSON.stringify({ target: 'http://127.0.0.1:1' }) });
  t.equal(sse.status, 422);
  t.equal((await a.fetch(`/jobs?target=${encodeURIComponent('http://127.0.0.1:1')}`)).status, 422);
});

t.test('the catalog of a target', async (t) => {
  const direct = (await (await b.fetch('/jobs')).json()) as unknown;
  const res = await a.fetch(`/jobs?target=${encodeURIComponent(b.url)}`);
  t.equal(res.status, 200);
  t.same(await res.json(), direct);
});

t.test('SSE is forwarded event by event', async (t) => {
  const { res, events } = await openEvents(a, 'ticker', b.url);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/event-stream/);
  const it = events![Symbol.asyncIterator]();
  // B holds its second event until the first one has reached this client through A.
  const first = await withTimeout(it.next(), 5_000, 'the first event to arrive before the remote Job finished');
  t.match(first.value, { kind: 'progress', name: 'first', percentage: 50 });
  probeB.releaseTicker();
  const rest: unknown[] = [];
  for (let r = await it.next(); !r.done; r = await it.next()) rest.push(r.value);
  t.match(rest, [{ kind: 'progress', name: 'second' }, { kind: 'result', answer: 'ticked', success: true }]);

  const direct = await b.events('boom');
  const forwarded = await a.fetch('/jobs/boom/events', { method: 'POST', body: JSON.stringify({ target: b.url }) });
  t.equal(forwarded.status, 200);
  t.equal(await forwarded.text(), direct.raw, 'a failing remote stream is relayed byte for byte');
});

t.test('a remote 4xx on /events reaches the client as that 4xx', async (t) => {
  const unknown = await a.fetch('/jobs/nope/events', { method: 'POST', body: JSON.stringify({ target: b.url }) });
  t.equal(unknown.status, 404);
  t.same(await unknown.json(), { detail: 'Unknown job', unknown_job: { name: 'nope', closest: [] } });
  const invalid = await a.fetch('/jobs/strict/events', { method: 'POST', body: JSON.stringify({ target: b.url, arguments: { n: 'x' } }) });
  t.equal(invalid.status, 422);
  t.match(await invalid.json(), { detail: [{ loc: ['body', 'arguments', 'n'] }] });
});

t.test('a client disconnect closes the upstream stream and stops the remote Job', async (t) => {
  probeB.holdStarted = probeB.holdAborted = false;
  const controller = new AbortController();
  const { res, events } = await openEvents(a, 'hold', b.url, controller.signal);
  t.equal(res.status, 200);
  const it = events![Symbol.asyncIterator]();
  t.match((await it.next()).value, { kind: 'progress', name: 'holding' });
  t.ok(probeB.holdStarted);
  t.notOk(probeB.holdAborted);
  controller.abort();
  await it.return?.(undefined).catch(() => undefined);
  await waitFor(() => probeB.holdAborted, 10_000, 'the remote Job to see its caller leave');
  t.pass('the remote Job was aborted');

  // The same for an ordinary JSON call: leaving closes the forwarded request.
  probeB.holdStarted = probeB.holdAborted = false;
  const leave = new AbortController();
  const pending = a.fetch('/jobs/hold', { method: 'POST', body: JSON.stringify({ target: b.url }), signal: leave.signal }).catch((e: Error) => e);
  await waitFor(() => probeB.holdStarted, 10_000, 'the remote JSON call to start');
  leave.abort();
  t.type(await pending, Error);
  await waitFor(() => probeB.holdAborted, 10_000, 'the remote JSON call to see its caller leave');
  t.pass('the remote JSON call was aborted');
});

t.test('leaving a forwarded shell call kills the remote command', async (t) => {
  const pidFile = join(b.workspace, 'sleeper.pid');
  for (const route of ['/jobs/shell/events', '/jobs/shell']) {
    await rm(pidFile, { force: true });
    const leave = new AbortController();
    const pending = a
      .fetch(route, { method: 'POST', body: JSON.stringify({ target: b.url, arguments: { command: `echo $$ > sleeper.pid; exec sleep 60`, timeout: 120 } }), signal: leave.signal })
      .then((res) => res.text())
      .catch((e: Error) => e);
    const pid = Number(await waitFor(async () => (await readFile(pidFile, 'utf8').catch(() => '')).trim(), 10_000, 'the remote command to start'));
    t.ok(existsSync(`/proc/${pid}`), `${route}: the remote sleep runs`);
    leave.abort();
    t.type(await pending, Error);
    await waitFor(() => !existsSync(`/proc/${pid}`), 10_000, `the remote sleep (pid ${pid}) to be killed`);
    t.pass(`${route}: the remote command was killed`);
  }
});

t.test('a target that is down, and a wrong remote token, give 502', async (t) => {
  for (const res of [
    await d.fetch('/jobs/version', { method: 'POST', body: JSON.stringify({ target: down }) }),
    await d.fetch('/jobs/version/events', { method: 'POST', body: JSON.stringify({ target: down }) }),
    await d.fetch(`/jobs?target=${encodeURIComponent(down)}`),
  ]) {
    t.equal(res.status, 502);
    t.match(await res.json(), { detail: /^Cannot reach target http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/ });
  }
  for (const res of [
    await d.fetch('/jobs/version', { method: 'POST', body: JSON.stringify({ target: b.url }) }),
    await d.fetch('/jobs/version/events', { method: 'POST', body: JSON.stringify({ target: b.url }) }),
    await d.fetch(`/jobs?target=${encodeURIComponent(b.url)}`),
  ]) {
    t.equal(res.status, 502, 'the caller is not told to authenticate again');
    const body = (await res.json()) as { detail: string };
    t.match(body.detail, /rejected the token configured for it/);
    t.notMatch(body.detail, /not-the-token-of-b/, 'the stored token never appears in answers');
  }
});

t.test('list_machines checks every target of a fleet concurrently', async (t) => {
  const port = (url: string) => new URL(url).port;
  const healthy = [
    { address: `http://127.0.0.1:${port(b.url)}`, healthy: true },
    { address: `http://127.0.0.1:${port(c.url)}`, healthy: true },
  ];
  t.same((await a.call('list_machines')).body, { answer: healthy, success: true, metadata: {} }, 'targets answering to their stored tokens are healthy');
  const mixed = [
    { address: `http://127.0.0.1:${port(down)}`, healthy: false },
    { address: `http://127.0.0.1:${port(b.url)}`, healthy: false },
    { address: `http://localhost:${port(c.url)}`, healthy: true },
    { address: fake.url, healthy: false },
  ];
  t.same((await d.call('list_machines')).body, { answer: mixed, success: true, metadata: {} }, 'down, wrong-token and broken targets are unhealthy, the rest healthy');
  t.same((await d.events('list_machines')).events.at(-1), { kind: 'result', answer: mixed, success: true, metadata: {} });
  // The same question asked of B through A: B has no targets.
  t.same((await a.call('list_machines', {}, { target: b.url })).body.answer, []);
});

t.test('broken answers from a target give 502 or a failed result', async (t) => {
  const call = (name: string) => d.fetch(`/jobs/${name}`, { method: 'POST', body: JSON.stringify({ target: fake.url }) });
  for (const [name, detail] of [
    ['not_json', /without a JobResponse/],
    ['not_response', /without a JobResponse/],
    ['crash', /answered HTTP 500: Internal server error/],
    ['cut', /broke off its answer/],
  ] as const) {
    const res = await call(name);
    t.equal(res.status, 502, name);
    t.match(await res.json(), { detail }, name);
  }
  const missing = await call('missing');
  t.equal(missing.status, 404, 'a 4xx without JSON still passes through');
  t.same(await missing.json(), { detail: 'nothing here' });
  t.ok(fake.seen.length > 0 && fake.seen.every((s) => s.headers['authorization'] === 'Bearer stored-secret'), "the stored token is what the target sees, never the caller's");

  const plain = await d.fetch('/jobs/plain/events', { method: 'POST', body: JSON.stringify({ target: fake.url }) });
  t.equal(plain.status, 502);
  const garbled = await d.events('garbled', {});
  t.equal(garbled.status, 404, 'locally unknown without a target');
  const sse = async (name: string) => (await d.fetch(`/jobs/${name}/events`, { method: 'POST', body: JSON.stringify({ target: fake.url }) })).text();
  t.match(await sse('garbled'), /event: result\ndata: .*"answer":"RuntimeError: event stream from target http:\/\/127\.0\.0\.1:\d+ broke off: event data is not JSON/);
  t.match(await sse('endless'), /"name":"x".*\n\nevent: result\ndata: \{"kind":"result","answer":"Stream produced no terminal result","success":false/s);
});

t.test('a target that sends an endless event line gets a failed result; large answers stream intact', async (t) => {
  const text = await (await d.fetch('/jobs/endless_line/events', { method: 'POST', body: JSON.stringify({ target: fake.url }) })).text();
  t.match(text, /event: result\ndata: \{"kind":"result","answer":"RuntimeError: event stream from target .* broke off: the target sent an oversized event/);
  await waitFor(() => fakeSeen.endlessClosed, 10_000, 'the target connection to be closed');
  t.equal((await d.fetch('/health')).status, 200, 'the service still answers');

  const call = (name: string) => d.fetch(`/jobs/${name}`, { method: 'POST', body: JSON.stringify({ target: fake.url }) });
  const big = await call('large');
  t.equal(big.status, 200);
  t.ok((await big.text()) === large(7), 'a 40 MiB forwarded answer arrives intact');
  const cut = await call('large_cut');
  t.equal(cut.status, 200, 'a large answer is streamed from its first bytes');
  await t.rejects(cut.text(), 'a large answer the target broke off arrives broken, not short and complete');
  const html = await call('large_html');
  t.equal(html.status, 502, 'a large answer that is not a JSON object is a 502');
});

t.test('a target streaming empty data lines is cut off after the event limit in bytes', async (t) => {
  const text = await (await d.fetch('/jobs/empty_lines/events', { method: 'POST', body: JSON.stringify({ target: fake.url }) })).text();
  t.match(text, /event: result\ndata: \{"kind":"result","answer":"RuntimeError: event stream from target .* broke off: the target sent an oversized event \(more than 33554432 bytes\)/);
  await waitFor(() => fakeSeen.emptyClosedEarly, 10_000, 'the target connection to be closed');
  t.ok(fakeSeen.emptyBytes < 48 * MiB, `the service stopped reading soon after the limit (${(fakeSeen.emptyBytes / MiB).toFixed(1)} MiB sent)`);
});

t.test('a large answer that only starts like a JobResponse arrives broken, not as a complete 200', async (t) => {
  for (const path of Object.keys(LOOKALIKES)) {
    const res = await d.fetch(path, { method: 'POST', body: JSON.stringify({ target: fake.url }) });
    t.equal(res.status, 200, `${path}: streamed from its first bytes`);
    if (path === '/jobs/valid') t.equal(await res.text(), LOOKALIKES[path], 'a valid large answer arrives intact');
    else await t.rejects(res.text(), `${path}: the caller sees a broken response`);
  }
  const start = await d.fetch('/jobs/x', { method: 'POST', body: JSON.stringify({ target: fake.url }) });
  t.equal(start.status, 404, 'the target is still reachable');
  t.equal((await d.fetch('/health')).status, 200, 'the service still answers');
});
