import { access, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { packSnapshot } from '../../supervisor/snapshots/pack-snapshot.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { startTestService, waitFor, type TestService } from '../helpers/service.js';
import { upload } from './plugin-fixture.js';
import { craftTarGz, statusJson, type RawMember } from './craft-tar.js';

/** One service for every test (Tasks of distinct names); B only receives the moved Tasks. */
const svc = await startTestService(t);

/** Runs the built-in demo to its end; answers the Task ID. */
async function finishedDemo(svc: TestService, name: string, fail = false): Promise<string> {
  const handle = (await svc.call('submit', { task: 'demo', x: 2, y: 3, fail, task_name: name })).body.answer;
  await svc.call('wait_task', { task_id: handle.task_id, run_id: handle.run_id });
  return handle.task_id;
}

/** Every path below the workspace (the private state excluded), to prove nothing changed. */
async function tree(svc: TestService): Promise<string[]> {
  const all = (await readdir(svc.workspace, { recursive: true })) as string[];
  return all.filter((p) => !p.startsWith('.taskyard')).sort();
}

async function stageBytes(svc: TestService, bytes: Buffer, name = 'snapshot.tar.gz') {
  const file = join(svc.workspace, '..', `${process.pid}-${Math.random().toString(36).slice(2)}.tgz`);
  await writeFile(file, bytes);
  t.teardown(() => import('node:fs/promises').then((fs) => fs.rm(file, { force: true })));
  return upload(svc, file, name);
}

t.test('finished Tasks move to another service and are replaced and deleted there', async (t) => {
  const a = svc;
  // B runs no Task (it only receives them): no runner is started ahead of need.
  const b = await startTestService(t, { token: 'token-of-b', config: { service: { runner_pool_size: 0 } } });
  const good = await finishedDemo(a, 'good');
  const bad = await finishedDemo(a, 'bad', true);
  const archive = join(a.workspace, '..', `${process.pid}-moved.tar.gz`);
  t.teardown(() => import('node:fs/promises').then((fs) => fs.rm(archive, { force: true })));
  await packSnapshot(a.workspace, [good, bad], archive);

  const staged = await upload(b, archive);
  const applied = await b.call('sync_tasks', { path: staged.path });
  t.same(applied.body, { answer: { applied: [good, bad], deleted: [] }, success: true, metadata: {} });
  await t.rejects(access(join(b.workspace, staged.path)), 'the staged archive is consumed');
  for (const id of [good, bad]) {
    t.same((await b.call('status', { task_id: id })).body.answer, (await a.call('status', { task_id: id })).body.answer, `${id}: same status on B`);
  }
  t.same(await readFile(join(b.workspace, 'base', good, 'metadata.json')), await readFile(join(a.workspace, 'base', good, 'metadata.json')));
  t.match((await b.call('get_task_context', { task_id: good })).body.answer, { metadata_exists: true });
  t.ok((await b.call('list_task_ids')).body.answer.includes(good), 'the index knows them at once');

  // Applying again replaces the finished directories (over SSE this time).
  const again = await upload(b, archive);
  const sse = await b.events('sync_tasks', { path: again.path });
  t.match(sse.events.map((e) => e['kind']), ['progress', 'progress', 'result']);
  t.same(sse.events.at(-1), { kind: 'result', answer: { applied: [good, bad], deleted: [] }, success: true, metadata: {} });

  const mcp = await connectMcp(t, b.url, b.token);
  const deleted = await mcp.callTool({ name: 'sync_tasks', arguments: { deletions: [bad, 'base#demo#never-existed'] } });
  t.same(deleted.structuredContent, { answer: { applied: [], deleted: [bad] }, success: true, metadata: {} }, 'deletions over MCP');
  t.match((await b.call('status', { task_id: bad })).body.answer, /^KeyError/);
  await t.rejects(access(join(b.workspace, 'base', bad)));
});

t.test('hostile and broken archives change nothing', async (t) => {
  const kept = await finishedDemo(svc, 'kept');
  const id = 'base#demo#incoming';
  const dir = `base/${id}`;
  const ok: RawMember[] = [{ path: `${dir}/` }, { path: `${dir}/status.json`, body: statusJson(id) }];
  const manyDirs = Array.from({ length: 20_001 }, (_, i) => ({ path: `${dir}/d${i}/` }));
  const cases: Array<[string, Buffer, RegExp]> = [
    ['path traversal', craftTarGz([...ok, { path: `${dir}/../../../evil.txt`, body: 'x' }]), /escapes its directory/],
    ['an absolute name', craftTarGz([...ok, { path: '/tmp/evil.txt', body: 'x' }]), /absolute name/],
    ['a symbolic link', craftTarGz([...ok, { path: `${dir}/passwd`, type: 'SymbolicLink', linkpath: '/etc/passwd' }]), /is a SymbolicLink; only regular files and directories/],
    ['a hard link', craftTarGz([...ok, { path: `${dir}/hard`, type: 'Link', linkpath: `${dir}/status.json` }]), /is a Link/],
    ['a FIFO', craftTarGz([...ok, { path: `${dir}/pipe`, type: 'FIFO' }]), /is a FIFO/],
    ['an oversize member', craftTarGz([...ok, { path: `${dir}/huge.bin`, size: 5 * 1024 ** 3 }], { truncate: true }), /expands to more than 4294967296 bytes/],
    ['too many members', craftTarGz([...ok, ...manyDirs]), /more than 20000 members/],
    ['a duplicate member', craftTarGz([...ok, { path: `${dir}/status.json`, body: statusJson(id) }]), /contains base\/base#demo#incoming\/status.json twice/],
    ['a running status', craftTarGz([{ path: `${dir}/status.json`, body: statusJson(id, 'running') }]), /status is running; only finished Tasks can be applied/],
    ['no status', craftTarGz([{ path: `${dir}/log.txt`, body: 'x' }]), /status.json is missing or is not a valid TaskStatus/],
    ['a status of another Task', craftTarGz([{ path: `${dir}/status.json`, body: statusJson('base#demo#other') }]), /not a valid TaskStatus of this Task/],
    ['a file outside Task directories', craftTarGz([...ok, { path: 'README', body: 'x' }]), /is not inside a <task_type>\/<task_id>\/ directory/],
    ['a directory not named after a Task ID', craftTarGz([{ path: 'base/not-an-id/status.json', body: '{}' }]), /not named after a valid Task ID/],
    ['a Task under the wrong type', craftTarGz([{ path: `other/${id}/status.json`, body: statusJson(id) }]), /holds a Task of type base/],
    ['a private directory', craftTarGz([{ path: '.taskyard/token', body: 'x' }]), /not named after a valid Task ID|not inside/],
    ['not a gzip file', Buffer.from('certainly not an archive'), /not a valid \.tar\.gz archive/],
    ['an archive without Tasks', craftTarGz([{ path: 'base/' }]), /carries no <task_type>\/<task_id>\/ directory/],
  ];
  const before = await tree(svc);
  for (const [what, bytes, reason] of cases) {
    const staged = await stageBytes(svc, bytes);
    const result = await svc.call('sync_tasks', { path: staged.path });
    t.equal(result.status, 200, what);
    t.match(result.body, { success: false, answer: /^ValueError: / }, what);
    t.match(result.body.answer, reason, what);
    t.same((await tree(svc)).filter((p) => !p.startsWith('tmp')), before.filter((p) => !p.startsWith('tmp')), `${what}: workspace unchanged`);
  }
  t.match((await svc.call('status', { task_id: kept })).body.answer, { state: 'succeeded' });
  t.same(await readdir(join(svc.workspace, '.taskyard', 'sync-work')), [], 'no scratch left behind');
});

t.test('active Tasks are never replaced or deleted', async (t) => {
  const handle = (await svc.call('submit', { task: 'sleep', seconds: 60, task_name: 'busy' })).body.answer;
  const busy = { task_id: handle.task_id, run_id: handle.run_id };
  await waitFor(async () => (await svc.call('status', { task_id: busy.task_id })).body.answer.state === 'running', 10_000, 'sleep to run');
  const other = 'base#demo#bystander';
  const archive = craftTarGz([
    { path: `base/${other}/status.json`, body: statusJson(other) },
    { path: `base/${busy.task_id}/status.json`, body: statusJson(busy.task_id) },
  ]);
  const replaced = await svc.call('sync_tasks', { path: (await stageBytes(svc, archive)).path });
  t.match(replaced.body, { success: false, answer: /^FileExistsError: Task base#sleep#busy is active/ });
  await t.rejects(access(join(svc.workspace, 'base', other)), 'the other Task of the archive was not applied either');
  const deletion = await svc.call('sync_tasks', { deletions: [busy.task_id] });
  t.match(deletion.body, { success: false, answer: /^FileExistsError: Task base#sleep#busy is active/ });
  t.match((await svc.call('status', { task_id: busy.task_id })).body.answer, { state: 'running', run_id: busy.run_id });
  t.equal((await svc.call('cancel', { task_id: busy.task_id })).body.answer, true);
  t.match((await svc.call('wait_task', busy)).body.answer, { state: 'cancelled' }, 'no worker outlives the test');
});

t.test('arguments are checked', async (t) => {
  t.match((await svc.call('sync_tasks', {})).body.answer, /^ValueError: nothing to do/);
  t.match((await svc.call('sync_tasks', { deletions: ['nope'] })).body.answer, /^ValueError: deletions: "nope" is not a valid Task ID/);
  t.match((await svc.call('sync_tasks', { path: 'elsewhere.tgz' })).body.answer, /^ValueError: path "[^"]+" is not a staged upload/);
  t.equal((await svc.call('sync_tasks', { deletions: Array.from({ length: 201 }, (_, i) => `base#demo#t${i}`) })).status, 422, 'at most 200 deletions');
  t.equal((await svc.call('sync_tasks', { deletions: ['base#demo#a', 'base#demo#a'] })).status, 422, 'no duplicates');
  t.equal((await svc.call('sync_tasks', { path: 'x', other: 1 })).status, 422, 'only the listed fields');
  const id = 'base#demo#both';
  const staged = await stageBytes(svc, craftTarGz([{ path: `base/${id}/status.json`, body: statusJson(id) }]));
  t.match((await svc.call('sync_tasks', { path: staged.path, deletions: [id] })).body.answer, /^ValueError: Task base#demo#both is both in the archive and in deletions/);
});
