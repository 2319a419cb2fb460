import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { hookOf } from '../../protocol/abort-hook.js';
import { KeepAlivePool, type PooledResponse } from '../../protocol/keep-alive-pool.js';
import { UpstreamError } from '../../protocol/upstream.js';
import { closedPort, startPlainServer } from '../../harness/http-server.js';
import { waitFor } from '../helpers/wait-for.js';

function pool(t: Test, url: string): KeepAlivePool {
  const p = new KeepAlivePool(new URL(url));
  t.teardown(() => p.close());
  return p;
}

async function text(res: PooledResponse): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of res) parts.push(chunk);
  return Buffer.concat(parts).toString();
}

/** A raw TCP server answering each connection's requests with `answer(connection number, request number)`. */
async function rawServer(t: Test, answer: (socket: Socket, conn: number, nth: number) => void): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    const conn = ++connections;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let nth = 0;
    socket.on('data', (chunk) => {
      for (let at = chunk.indexOf('\r\n\r\n'); at !== -1; at = chunk.indexOf('\r\n\r\n', at + 4)) answer(socket, conn, ++nth);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
}

t.test('requests reuse one kept-alive connection and carry exactly the given headers', async (t) => {
  const connections = new Set<unknown>();
  const server = await startPlainServer(t, async (req, res) => {
    connections.add(req.socket);
    let body = '';
    for await (const c of req) body += c;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ body }));
  });
  const p = pool(t, server.url);
  for (let i = 0; i < 5; i++) {
    const res = await p.request({ method: 'POST', path: `/jobs/x?i=${i}`, headerLines: 'authorization: Bearer tok\r\n', body: `{"i":${i}}`, wholeUpTo: 1024 });
    t.equal(res.statusCode, 200);
    t.same(JSON.parse(res.whole!.toString()), { body: `{"i":${i}}` });
  }
  t.equal(connections.size, 1, 'one connection served all five');
  t.same(server.seen[4], { method: 'POST', url: '/jobs/x?i=4', headers: { host: new URL(server.url).host, authorization: 'Bearer tok', 'content-length': '7' } });
});

t.test('a kept-alive connection the peer closed as it was reused is retried once on a new one', async (t) => {
  const server = await rawServer(t, (socket, conn, nth) => {
    // Every connection answers its first request and drops on its second, as an idle timeout would.
    if (nth === 1) socket.write(`HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n${conn}`);
    else socket.destroy();
  });
  const p = pool(t, server.url);
  const first = await p.request({ method: 'GET', path: '/', headerLines: '', wholeUpTo: 10 });
  t.equal(first.whole!.toString(), '1');
  const second = await p.request({ method: 'GET', path: '/', headerLines: '', wholeUpTo: 10 });
  t.equal(second.whole!.toString(), '2', 'answered on a fresh connection');
  t.equal(server.connections(), 2);

  const silent = await rawServer(t, (socket) => socket.destroy());
  await t.rejects(pool(t, silent.url).request({ method: 'GET', path: '/', headerLines: '', wholeUpTo: 10 }), { name: 'UpstreamError', message: /closed before an answer/ }, 'a new connection that closes is not retried');
});

t.test('large answers stream with backpressure; abort and close drop the connection', async (t) => {
  const MiB = 1024 * 1024;
  let closed = 0;
  const server = await startPlainServer(t, async (req, res) => {
    res.on('close', () => closed++);
    res.writeHead(200, { 'content-type': 'application/octet-stream' }); // chunked
    for (let i = 0; i < 16 && !res.destroyed; i++) if (!res.write(Buffer.alloc(MiB, i))) await new Promise((r) => res.once('drain', r));
    res.end();
  });
  const p = pool(t, server.url);
  const res = await p.request({ method: 'GET', path: '/', headerLines: '', wholeUpTo: MiB });
  t.equal(res.whole, undefined, 'over wholeUpTo: streamed');
  let size = 0;
  for await (const chunk of res) size += chunk.length;
  t.equal(size, 16 * MiB, 'every byte, in order of arrival');

  const controller = new AbortController();
  const aborted = await p.request({ method: 'GET', path: '/', headerLines: '', abort: hookOf(controller.signal), wholeUpTo: 0 });
  const reading = (async () => {
    for await (const chunk of aborted) if (chunk.length) controller.abort(new Error('caller left'));
  })();
  await t.rejects(reading, { message: 'caller left' }, 'the reader sees the abort');
  await waitFor(() => closed === 2, 5000, 'the upstream to see the request closed');

  const idle = await p.request({ method: 'GET', path: '/', headerLines: '', wholeUpTo: 0 });
  await text(idle);
  p.close();
  await t.rejects(p.request({ method: 'GET', path: '/', headerLines: '', wholeUpTo: 0 }), { name: 'UpstreamError', code: 'ECLOSED' });
});

t.test('idle connections close after the idle time, and the next request opens a new one', async (t) => {
  const open = new Set<Socket>();
  const server = await rawServer(t, (socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
  });
  const p = new KeepAlivePool(new URL(server.url), { idleMs: 150 });
  t.teardown(() => p.close());
  const [a, b] = await Promise.all([1, 2].map(() => p.request({ method: 'GET', path: '/', headerLines: '', wholeUpTo: 10 })));
  t.same([a!.whole!.toString(), b!.whole!.toString()], ['ok', 'ok']);
  t.equal(server.connections(), 2, 'two at once: two connections');
  await waitFor(() => open.size === 0, 3000, 'the idle connections to be closed (the default idle time is 4 s)');
  const again = await p.request({ method: 'GET', path: '/', headerLines: '', wholeUpTo: 10 });
  t.equal(again.whole!.toString(), 'ok');
  t.equal(server.connections(), 3, 'a new connection after the idle ones closed');
});

t.test('an idle connection that receives bytes nobody asked for is dropped, not reused', async (t) => {
  let firstClosed = false;
  const server = await rawServer(t, (socket, conn) => {
    socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
    if (conn !== 1) return;
    socket.once('close', () => (firstClosed = true));
    setTimeout(() => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nforged'), 20);
  });
  const p = pool(t, server.url);
  t.equal((await p.request({ method: 'GET', path: '/', headerLines: '', wholeUpTo: 10 })).whole!.toString(), 'ok');
  await waitFor(() => firstClosed, 5000, 'the pool to drop the connection that spoke out of turn');
  t.equal((await p.request({ method: 'GET', path: '/', headerLines: '', wholeUpTo: 10 })).whole!.toString(), 'ok');
  t.equal(server.connections(), 2, 'answered on a fresh connection');
});

t.test('an unreachable origin is an UpstreamError with its code', async (t) => {
  const port = await closedPort();
  const err = await pool(t, `http://127.0.0.1:${port}`).request({ method: 'GET', path: '/', headerLines: '', wholeUpTo: 0 }).catch((e: unknown) => e);
  t.ok(err instanceof UpstreamError);
  t.match(err, { code: 'ECONNREFUSED', message: /ECONNREFUSED/ });
});
