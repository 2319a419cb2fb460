// Runs on every HTTP front end.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { PACKAGE_ROOT } from '../../core/build-info.js';
import { parseSse, startTestService, waitFor } from '../helpers/service.js';

const CLI = join(PACKAGE_ROOT, 'dist', 'bin', 'cli.js');

/** One GET over a keep-alive agent; resolves once the body is read, leaving the socket idle. */
function keepAliveGet(url: string, agent: Agent, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/health`, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('close() ends open SSE streams with a failed result and drops idle keep-alive connections', async (t) => {
  const svc = await startTestService(t);
  const agent = new Agent({ keepAlive: true });
  t.teardown(() => agent.destroy());
  t.equal(await keepAliveGet(svc.url, agent, svc.token!), 200);
  const idle = Object.values(agent.freeSockets).flat()[0];
  t.ok(idle, 'an idle keep-alive connection is open');
  const idleClosed = new Promise((resolve) => idle!.once('close', resolve));

  // Not awaited: the stream's headers may only arrive with its first frame.
  const text = svc
    .fetch('/jobs/shell/events', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { command: 'echo started > sse.flag; sleep 120', timeout: 120 } }),
    })
    .then((r) => r.text());
  await waitFor(async () => (await svc.call('shell', { command: 'cat sse.flag' })).body.success, 10_000, 'the streamed command to start');

  const started = Date.now();
  await svc.close();
  t.ok(Date.now() - started < 5_000, `close() returned in ${Date.now() - started} ms`);
  await idleClosed;
  t.pass('the idle keep-alive connection was closed by the service');
  const events = parseSse(await text);
  t.match(events.at(-1), { kind: 'result', success: false, answer: /service is stopping/ }, 'the open stream ended with a failed result');
});

t.test('serve exits promptly after SIGTERM with idle keep-alive clients connected', async (t) => {
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-stop-'));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--workspace', workspace, '--token', 'stop-token'], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => void (child.exitCode === null && child.kill('SIGKILL')));
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const url = await waitFor(() => /listening on (http:\/\/\S+)/.exec(output)?.[1], 20_000, 'serve to start');
  const agent = new Agent({ keepAlive: true, keepAliveMsecs: 60_000 });
  t.teardown(() => agent.destroy());
  for (let i = 0; i < 10; i++) t.equal(await Promise.all(Array.from({ length: 10 }, () => keepAliveGet(url, agent, 'stop-token'))).then((s) => s.every((x) => x === 200)), true);
  t.ok(Object.values(agent.freeSockets).flat().length > 0, 'idle keep-alive connections are open');
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const started = Date.now();
  child.kill('SIGTERM');
  let slow: NodeJS.Timeout | undefined;
  const code = await Promise.race([exited, new Promise<'slow'>((resolve) => (slow = setTimeout(() => resolve('slow'), 5_000)))]);
  clearTimeout(slow);
  t.equal(code, 0, `serve exited with 0 (took ${Date.now() - started} ms; before the fix, uWS waited for idle clients)`);
});
