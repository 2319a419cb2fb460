/**
 * NODE_EXTRA_CA_CERTS reaches Task code although the runner starts without it (it is loaded on
 * first use, see runner/extra-ca-certs.ts): fetch, https and the Task's own node
 * subprocesses all trust a CA given only through that variable, and a bad path is a warning.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { PACKAGE_ROOT } from '../../core/build-info.js';
import { makeWorkspace, startTaskService, submitOk, waitTask, writeFixturePlugin } from './task-helpers.js';

const TLS = join(PACKAGE_ROOT, 'test', 'tasks', 'fixtures', 'tls');
const CA_FILE = join(TLS, 'ca.pem');

const PROBE = `
import { execFileSync } from 'node:child_process';
import https from 'node:https';
import { defineTask } from 'taskyard/task';

const attempt = async (fn) => {
  try { return await fn(); } catch (err) { return 'error: ' + (err.cause?.code ?? err.code ?? err.message); }
};
const get = (url) => new Promise((resolve, reject) => {
  https.get(url, (res) => { let body = ''; res.setEncoding('utf8'); res.on('data', (c) => (body += c)); res.on('end', () => resolve(body)); }).on('error', reject);
});
const childFetch = (url) => \`fetch(\${JSON.stringify(url)}).then((r) => r.text()).then((t) => process.stdout.write(t), (e) => process.stdout.write('error: ' + (e.cause?.code ?? e.message)))\`;

export default [defineTask({
  name: 'tls-probe',
  taskType: 'probe',
  description: 'Fetches one HTTPS URL with fetch, with node:https and from a node subprocess.',
  input: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
  output: { type: 'object', properties: { fetched: { type: 'string' }, got: { type: 'string' }, again: { type: 'string' }, child: { type: 'string' }, env: { type: 'object' } } },
  async run({ url }) {
    return {
      fetched: await attempt(async () => (await fetch(url)).text()),
      got: await attempt(() => get(url)),
      again: await attempt(() => get(url + 'again')),
      child: await attempt(() => execFileSync(process.execPath, ['-e', childFetch(url)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })),
      env: { extra: process.env.NODE_EXTRA_CA_CERTS ?? null, handover: process.env.TASKYARD_EXTRA_CA_CERTS ?? null },
    };
  },
})];
`;

/** The probe Task's output (a type alias, so a status's `result` object converts to it). */
type Probe = {
  fetched: string;
  got: string;
  again: string;
  child: string;
  env: { extra: string | null; handover: string | null };
};

async function httpsServer(t: Test): Promise<string> {
  const server = createServer({ key: readFileSync(join(TLS, 'server-key.pem')), cert: readFileSync(join(TLS, 'server.pem')) }, (req, res) => res.end(`hello over tls ${req.url}`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

async function probe(t: Test, caFile: string, url: string): Promise<{ result: Probe; log: string; workspace: string }> {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace, { name: 'tls-probe-plugin', tasks: PROBE });
  const svc = await startTaskService(t, { workspace, config: { environment: { NODE_EXTRA_CA_CERTS: caFile } } });
  const handle = await submitOk(t, svc, { task: 'tls-probe', url });
  const done = await waitTask(svc, handle);
  t.equal(done.status.state, 'succeeded', done.status.error);
  const log = readFileSync(join(workspace, 'probe', handle.task_id, 'task.log'), 'utf8');
  return { result: done.status['result'] as Probe, log, workspace };
}

t.test('a CA given only through NODE_EXTRA_CA_CERTS is trusted by fetch, https and subprocesses', async (t) => {
  const url = await httpsServer(t);
  const { result } = await probe(t, CA_FILE, url);
  t.equal(result.fetched, `hello over tls /`, 'fetch');
  t.equal(result.got, `hello over tls /`, 'node:https');
  t.equal(result.again, `hello over tls /again`, 'a second connection (shared context)');
  t.equal(result.child, `hello over tls /`, 'a node subprocess of the Task');
  t.same(result.env, { extra: CA_FILE, handover: null }, 'the Task sees the variable as set, and no trace of the handover');
});

t.test('without that CA the same calls fail, and an unreadable file is only a warning', async (t) => {
  const url = await httpsServer(t);
  const missing = join(TLS, 'missing-ca.pem');
  const { result, log } = await probe(t, missing, url);
  for (const way of ['fetched', 'got', 'child'] as const) t.match(result[way], /^error: /, `${way} refuses the unknown CA`);
  t.match(log, `Ignoring extra certs from \`${missing}\``, 'the warning lands in task.log');
});
