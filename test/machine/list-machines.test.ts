import { createServer, type Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { connectMcp } from '../helpers/mcp-client.js';
import { startTestService, waitFor } from '../helpers/service.js';
import { checkTarget } from '../../supervisor/machine/list-machines.js';

/** A plain HTTP server on a free port, closed at test end. */
async function listen(t: Test, handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; address: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { server, address: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** An address nobody listens on: bind a port, then release it. */
async function deadAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

// A service without targets: the first test lists its machines, the second lists it as a live target.
const live = await startTestService(t, { token: 'live-token' });

t.test('no targets: an empty list over JSON, SSE and MCP', async (t) => {
  const svc = live;
  t.same((await svc.call('list_machines')).body, { answer: [], success: true, metadata: {} });
  t.same((await svc.events('list_machines')).events, [{ kind: 'result', answer: [], success: true, metadata: {} }]);
  const mcp = await connectMcp(t, svc.url, svc.token);
  const result = await mcp.callTool({ name: 'list_machines', arguments: {} });
  t.same(result.structuredContent, { answer: [], success: true, metadata: {} });
});

t.test('targets: live, dead, wrong token, broken and silent services', async (t) => {
  const guarded = await startTestService(t, { token: 'guarded-token' });
  const dead = await deadAddress();
  const broken = await listen(t, (_req, res) => res.writeHead(503, { 'content-type': 'text/plain' }).end('down for maintenance'));
  // Answers nothing: the check must give up after its own timeout instead of hanging the query.
  const silent = await listen(t, () => {});
  const svc = await startTestService(t, {
    config: {
      targets: [
        { address: live.url, token: 'live-token' },
        { address: dead, token: 'whatever' },
        { address: guarded.url, token: 'not-the-guarded-token' },
        { address: broken.address },
        { address: silent.address },
      ],
    },
  });
  const expected = [
    { address: live.url, healthy: true },
    { address: dead, healthy: false },
    { address: guarded.url, healthy: false },
    { address: broken.address, healthy: false },
    { address: silent.address, healthy: false },
  ];
  const json = await svc.call('list_machines');
  t.same(json.body, { answer: expected, success: true, metadata: {} }, 'unhealthy targets do not fail the query');
  const sse = await svc.events('list_machines');
  t.same(sse.events.at(-1), { kind: 'result', answer: expected, success: true, metadata: {} });
});

t.test('the check of a silent target ends at its timeout even while garbage collections run', async (t) => {
  // Node 20 drops a timeout signal combined with AbortSignal.any when a collection runs, and the
  // check then hangs for good: collect all the time while it waits.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const silent = await listen(t, () => {});
  const collector = setInterval(gc, 5);
  t.teardown(() => clearInterval(collector));
  let settled: boolean | undefined;
  void Promise.all(Array.from({ length: 10 }, () => checkTarget({ address: silent.address, token: null }, new AbortController().signal, 200))).then((all) => {
    settled = all.every((h) => !h.healthy);
  });
  t.equal(await waitFor(() => settled, 5_000, 'every check to give up'), true);
});
