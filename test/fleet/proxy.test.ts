// Runs on every HTTP front end.
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import t, { type Test } from 'tap';
import { closedPort, startPlainServer } from '../../harness/http-server.js';
import { rawExchange } from '../workspace/raw-http.js';
import { startTestService, waitFor, type TestService } from '../helpers/service.js';

const MiB = 1024 * 1024;

/** Deterministic bytes, so both ends can hash what they expect without keeping it. */
function block(i: number, size = MiB): Buffer {
  return Buffer.alloc(size, i % 251);
}

/** What the upstream observed, shared with the test (it runs in this process). */
const seenBy = { firstChunk: false, clientGotA: false, endlessClosed: false };

async function startUpstream(t: Test) {
  return startPlainServer(t, async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const route = url.pathname.replace(/^\/base/, '');
    if (route === '/upload') {
      const hash = createHash('sha256');
      let size = 0;
      for await (const chunk of req as AsyncIterable<Buffer>) {
        seenBy.firstChunk = true;
        hash.update(chunk);
        size += chunk.byteLength;
      }
      return void res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ sha256: hash.digest('hex'), size }));
    }
    if (route === '/download') {
      const count = Number(url.searchParams.get('mib'));
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(count * MiB) });
      for (let i = 0; i < count; i++) {
        if (!res.write(block(i))) await new Promise((r) => res.once('drain', r));
      }
      return void res.end();
    }
    if (route === '/pingpong') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('A');
      await waitFor(() => seenBy.clientGotA, 5_000, 'the client to receive A through the proxy');
      return void res.end('B');
    }
    if (route === '/endless') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.on('close', () => (seenBy.endlessClosed = true));
      const timer = setInterval(() => res.write('tick\n'), 5);
      return void res.on('close', () => clearInterval(timer));
    }
    if (route === '/break') {
      // Small answers are read whole before anything is sent; large ones are streamed.
      const large = url.searchParams.has('large');
      res.writeHead(200, { 'content-length': String(large ? 8 * MiB : 1000) });
      return void res.write(large ? block(0) : '0123456789', () => res.destroy());
    }
    if (route === '/teapot') return void res.writeHead(418, { 'content-type': 'text/plain' }).end('short and stout');
    let body = '';
    for await (const chunk of req as AsyncIterable<Buffer>) body += chunk.toString();
    res.writeHead(200, {
      'content-type': 'application/json',
      'set-cookie': ['a=1; Path=/; Expires=Wed, 21 Oct 2037 07:28:00 GMT', 'b=2; Path=/'],
      connection: 'x-hop',
      'x-hop': 'must not pass',
      'x-end-to-end': 'kept',
    });
    res.end(req.method === 'HEAD' ? undefined : JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
  });
}

async function setup(t: Test): Promise<{ svc: TestService; upstream: Awaited<ReturnType<typeof startUpstream>> }> {
  const upstream = await startUpstream(t);
  const down = await closedPort();
  // No Task runs here: no runner is started ahead of need.
  const svc = await startTestService(t, { config: { service: { runner_pool_size: 0 }, proxy: { up: { url: `${upstream.url}/base/` }, down: { url: `http://127.0.0.1:${down}` } } } });
  return { svc, upstream };
}

/** A request with headers fetch refuses to send (Connection, TE) or paths it would normalise. */
function rawRequest(url: string, method: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(url), { method, path, headers }, async (res) => {
      let body = '';
      for await (const chunk of res as AsyncIterable<Buffer>) body += chunk.toString();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('every method reaches the upstream with path, query and the caller\'s credentials', async (t) => {
  const { svc, upstream } = await setup(t);
  for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
    const res = await fetch(`${svc.url}/proxy/up/some/where?q=1&x=%20y`, {
      method,
      headers: { authorization: 'Basic dXNlcjpwdw==', cookie: 'session=abc' },
      ...(method === 'GET' || method === 'OPTIONS' || method === 'DELETE' ? {} : { body: `body of ${method}` }),
    });
    t.equal(res.status, 200, `${method} is not behind the bearer check`);
    const seen = (await res.json()) as { method: string; url: string; headers: Record<string, string>; body: string };
    t.equal(seen.method, method);
    t.equal(seen.url, '/base/some/where?q=1&x=%20y');
    t.equal(seen.headers['authorization'], 'Basic dXNlcjpwdw==', 'the caller\'s Authorization passes');
    t.equal(seen.headers['cookie'], 'session=abc', 'cookies pass');
    t.equal(seen.headers['host'], new URL(upstream.url).host, 'Host names the upstream');
    t.equal(seen.headers['x-forwarded-prefix'], '/proxy/up');
    if (method !== 'GET' && method !== 'OPTIONS' && method !== 'DELETE') t.equal(seen.body, `body of ${method}`);
    t.same(res.headers.getSetCookie(), ['a=1; Path=/; Expires=Wed, 21 Oct 2037 07:28:00 GMT', 'b=2; Path=/'], 'several Set-Cookie headers stay separate');
    t.equal(res.headers.get('x-end-to-end'), 'kept');
    t.equal(res.headers.get('x-hop'), null, 'headers named by Connection are dropped');
  }
  const head = await fetch(`${svc.url}/proxy/up/x`, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(await head.text(), '');
  t.equal(upstream.seen.at(-1)?.method, 'HEAD');

  const encoded = await rawRequest(svc.url, 'GET', '/proxy/up/a%2Fb/c%20d');
  t.equal((JSON.parse(encoded.body) as { url: string }).url, '/base/a%2Fb/c%20d', 'the path is forwarded as received');
  const bare = await rawRequest(svc.url, 'GET', '/proxy/up');
  t.equal((JSON.parse(bare.body) as { url: string }).url, '/base', 'no path: the base URL itself');
});

t.test('the service token never reaches an upstream; hop-by-hop headers are dropped', async (t) => {
  const { svc } = await setup(t);
  const res = await rawRequest(svc.url, 'POST', '/proxy/up/echo', {
    authorization: `Bearer ${svc.token}`,
    connection: 'keep-alive, x-private',
    'x-private': 'hop',
    te: 'trailers',
    'keep-alive': 'timeout=5',
    'proxy-authorization': 'Basic c2VjcmV0',
    'x-public': 'e2e',
  });
  const seen = (JSON.parse(res.body) as { headers: Record<string, string> }).headers;
  t.equal(seen['authorization'], undefined, 'the service token is stripped');
  for (const name of ['x-private', 'te', 'keep-alive', 'proxy-authorization']) t.equal(seen[name], undefined, `${name} dropped`);
  t.equal(seen['x-public'], 'e2e');
});

t.test('bodies stream both ways', async (t) => {
  const { svc } = await setup(t);
  seenBy.firstChunk = false;
  // The second request chunk is produced only after the upstream has received the first one.
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(block(1, 1024));
      await waitFor(() => seenBy.firstChunk, 5_000, 'the upstream to receive the first chunk while the upload is open');
      for (let i = 0; i < 48; i++) controller.enqueue(block(i));
      controller.close();
    },
  });
  const expected = createHash('sha256').update(block(1, 1024));
  for (let i = 0; i < 48; i++) expected.update(block(i));
  const up = await fetch(`${svc.url}/proxy/up/upload`, { method: 'POST', body, duplex: 'half' } as RequestInit);
  t.equal(up.status, 201);
  t.same(await up.json(), { sha256: expected.digest('hex'), size: 1024 + 48 * MiB }, '48 MiB up, intact');

  seenBy.clientGotA = false;
  const pingpong = await fetch(`${svc.url}/proxy/up/pingpong`);
  const reader = pingpong.body!.getReader();
  const first = await reader.read();
  t.equal(Buffer.from(first.value!).toString(), 'A', 'the first response chunk arrives while the upstream still holds the rest');
  seenBy.clientGotA = true;
  let rest = '';
  for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString();
  t.equal(rest, 'B');

  const down = await fetch(`${svc.url}/proxy/up/download?mib=48`);
  t.equal(down.status, 200);
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of down.body as unknown as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    size += chunk.byteLength;
  }
  const want = createHash('sha256');
  for (let i = 0; i < 48; i++) want.update(block(i));
  t.equal(size, 48 * MiB);
  t.equal(hash.digest('hex'), want.digest('hex'), '48 MiB down, intact');
});

t.test('statuses, unknown names, dot segments, a broken and a down upstream', async (t) => {
  const { svc } = await setup(t);
  const teapot = await fetch(`${svc.url}/proxy/up/teapot`);
  t.equal(teapot.status, 418, 'upstream statuses pass through');
  t.equal(await teapot.text(), 'short and stout');

  const unknown = await fetch(`${svc.url}/proxy/nope/x`);
  t.equal(unknown.status, 404);
  t.match(await unknown.json(), { detail: /Unknown proxy "nope"/ });
  t.equal((await fetch(`${svc.url}/proxy`)).status, 404);
  t.equal((await fetch(`${svc.url}/proxy/nope/x`, { method: 'OPTIONS' })).status, 404, 'OPTIONS is routed to the proxy, not answered by the front door');

  for (const path of ['/proxy/up/../secret', '/proxy/up/a/%2e%2E/secret', '/proxy/up/./x']) {
    t.equal((await rawRequest(svc.url, 'GET', path)).status, 400, `${path} refused`);
  }

  const down = await fetch(`${svc.url}/proxy/down/x`);
  t.equal(down.status, 502);
  t.match(await down.json(), { detail: /Proxy upstream "down" is unreachable: .*ECONNREFUSED/ });

  const brokenSmall = await fetch(`${svc.url}/proxy/up/break`);
  t.equal(brokenSmall.status, 502, 'a small answer the upstream broke off is a 502');
  t.match(await brokenSmall.json(), { detail: 'Proxy upstream broke off its answer' });
  const broken = await fetch(`${svc.url}/proxy/up/break?large`);
  t.equal(broken.status, 200);
  await t.rejects(broken.arrayBuffer(), 'a streamed body the upstream broke off reaches the client broken, not short and complete');
});

t.test('a client that leaves closes the upstream exchange', async (t) => {
  const { svc } = await setup(t);
  seenBy.endlessClosed = false;
  const controller = new AbortController();
  const res = await fetch(`${svc.url}/proxy/up/endless`, { signal: controller.signal });
  const reader = res.body!.getReader();
  t.ok((await reader.read()).value);
  controller.abort();
  await waitFor(() => seenBy.endlessClosed, 10_000, 'the upstream response to close');
  t.pass('upstream closed');
});

t.test('bad proxy configuration stops the start', async (t) => {
  for (const [url, problem] of [
    ['ftp://x', /proxy\.p\.url: unsupported scheme/],
    ['http://u:p@x', /proxy\.p\.url: must not carry credentials/],
    ['not a url', /proxy\.p\.url: not an absolute URL/],
  ] as const) {
    await t.rejects(startTestService(t, { config: { proxy: { p: { url } } } }), { message: problem });
  }
});

t.test('no spelling of a dot segment leaves the upstream base path', async (t) => {
  const { svc, upstream } = await setup(t);
  const before = upstream.seen.length;
  const spellings = [
    '/proxy/up/..\\secret',
    '/proxy/up/a/..\\..\\secret',
    '/proxy/up/a\\..\\..\\secret',
    '/proxy/up/..%5Csecret',
    '/proxy/up/a/..%5c..%5csecret',
    '/proxy/up/a/%2e%2e%5csecret',
    '/proxy/up/a/.%2E\\secret',
    '/proxy/up/%252e%252e/secret',
    '/proxy/up/a/%252e%252e%252fsecret',
    '/proxy/up/%25252e%25252e/secret',
    '/proxy/up/%2e%2e%2fsecret',
    '/proxy/up/.\\secret',
  ];
  for (const path of spellings) {
    const res = await rawRequest(svc.url, 'GET', path);
    t.equal(res.status, 400, `${path} refused`);
  }
  t.equal(upstream.seen.length, before, 'none of them reached the upstream');
  const fine = await rawRequest(svc.url, 'GET', '/proxy/up/a..b/c.d/%2e%2efoo');
  t.equal(fine.status, 200, 'dots inside a segment are not dot segments');
  t.equal((JSON.parse(fine.body) as { url: string }).url, '/base/a..b/c.d/%2e%2efoo');
});

t.test('the service token does not pass in a repeated Authorization header', async (t) => {
  const { svc, upstream } = await setup(t);
  for (const values of [
    [`Bearer ${svc.token}`, `Bearer ${svc.token}`],
    ['Basic dXNlcjpwdw==', `Bearer ${svc.token}`],
    [`Bearer ${svc.token}`, 'Basic dXNlcjpwdw=='],
    [`Basic dXNlcjpwdw==, Bearer ${svc.token}`],
  ]) {
    const lines = values.map((v) => `Authorization: ${v}`).join('\n');
    const res = await rawExchange(svc.url, `GET /proxy/up/echo HTTP/1.1\nHost: 127.0.0.1\n${lines}\nConnection: close\n`);
    t.equal(res?.status, 200, values.join(' + '));
    const seen = upstream.seen.at(-1)!;
    t.notOk(JSON.stringify(seen.headers).includes(svc.token!), `the upstream never sees the token (${values.join(' + ')})`);
  }
});
