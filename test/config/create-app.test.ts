import { access, mkdtemp, readdir, readFile, readlink, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createApp } from '../../app/service.js';
import { validateConfig } from '../../supervisor/common/config.js';
import type { JobCatalog, JobResponse } from '../../schemas/job-response.js';

/** Inodes of the sockets this process has open. */
async function ownSockets(): Promise<Set<string>> {
  const inodes = new Set<string>();
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  return inodes;
}

/** How many TCP sockets of this process listen (state 0A in /proc/net/tcp and tcp6). */
async function listeningSockets(): Promise<number> {
  const own = await ownSockets();
  let count = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === '0A' && own.has(fields[9] ?? '')) count++;
    }
  }
  return count;
}

const exists = (path: string) => access(path).then(() => true, () => false);

t.test('createApp builds the service in process: Jobs and routes answer, no port is opened, no lock is taken', async (t) => {
  const workspace = await realpath(await mkdtemp(join(tmpdir(), 'taskyard-app-')));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  const listeningBefore = await listeningSockets();
  const app = await createApp({ config: validateConfig({ service: { workspace, port: 0, host: '127.0.0.1', runner_pool_size: 0, gpus: 0 } }, 'test'), token: 'app-token' });
  let open = true;
  t.teardown(() => (open ? app.close() : undefined));
  t.equal(app.workspace, workspace);
  const post = async (job: string, args: Record<string, unknown>) => {
    const res = await app.request({ method: 'POST', path: `/jobs/${job}`, headers: { authorization: 'Bearer app-token', 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
    t.equal(res.status, 200, `${job} answers 200`);
    return res.json() as JobResponse;
  };

  const submitted = await post('submit', { task: 'demo', x: 2, y: 3 });
  t.equal(submitted.success, true, 'a Task is submitted through the app');
  const { task_id, run_id } = submitted.answer as { task_id: string; run_id: string };
  const waited = await post('wait_task', { task_id, run_id });
  t.match(waited, { success: true, answer: { state: 'succeeded', result: { result: 5 } } }, 'and runs to its end');

  const catalog = await app.request({ path: '/jobs', headers: { authorization: 'Bearer app-token' } });
  t.equal(catalog.status, 200);
  t.ok((catalog.json() as { answer: JobCatalog }).answer.items.some((job) => job.name === 'submit'), 'the catalog route answers in process');
  t.ok(app.registry.get('submit'), 'the registry is the app’s');
  const refused = await app.request({ path: '/jobs', headers: { authorization: 'Bearer wrong' } });
  t.equal(refused.status, 401, 'auth applies in process as over HTTP');

  t.equal(await listeningSockets(), listeningBefore, 'no socket listens');
  t.equal(await exists(join(workspace, '.taskyard', 'service.lock')), false, 'no lock file is made');
  open = false;
  await app.close();
  await app.close();
  t.pass('closing twice is harmless');
});
