// Runs on every HTTP front end.
import { writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import t from 'tap';
import { startTestService } from '../helpers/service.js';

t.test('HEAD answers the length of the GET answer without its body, on both front ends', async (t) => {
  const svc = await startTestService(t);
  await writeFile(join(svc.workspace, 'a.txt'), 'x'.repeat(1000));
  // One connection for everything: a body sent after a HEAD would be read as the next answer.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const send = (method: string, path: string) =>
    new Promise<{ status: number; length: string | undefined; chunked: boolean; body: string }>((resolve, reject) => {
      const req = request(`${svc.url}${path}`, { method, agent, headers: { authorization: `Bearer ${svc.token}` } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, length: res.headers['content-length'], chunked: res.headers['transfer-encoding'] === 'chunked', body }));
      });
      req.on('error', reject).end();
    });
  for (const path of ['/health', '/jobs', '/openapi.json', '/files?path=a.txt', '/metrics']) {
    const head = await send('HEAD', path);
    const get = await send('GET', path);
    t.same([head.status, head.body, head.chunked], [200, '', false], `HEAD ${path}: no body, a known length`);
    t.equal(get.status, 200, `GET ${path} after it on the same connection`);
    // /metrics changes between two scrapes; the others answer the same bytes.
    if (path !== '/metrics') t.equal(Number(head.length), Buffer.byteLength(get.body), `HEAD ${path}: the length of the GET answer`);
  }
});
