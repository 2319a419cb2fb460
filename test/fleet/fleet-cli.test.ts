import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { runCli, type CliRun } from '../helpers/run-cli.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { greetTasks, packPlugin } from './plugin-fixture.js';

const home = await mkdtemp(join(tmpdir(), 'taskyard-fleet-cli-'));
t.teardown(() => rm(home, { recursive: true, force: true }));

/** The built CLI as a real process with a temporary HOME and no inherited tokens. */
const cli = (args: string[], env: Record<string, string> = {}): Promise<CliRun> => runCli(args, { HOME: home, ...env });

/** One target for both tests: the plugin test leaves it the plugin, the sync test moves Tasks of other names. */
const remote = await startTestService(t, { token: 'remote-token' });

async function finishedDemo(svc: TestService, name: string): Promise<string> {
  const handle = (await svc.call('submit', { task: 'demo', x: 1, y: 1, task_name: name })).body.answer;
  await svc.call('wait_task', { task_id: handle.task_id, run_id: handle.run_id });
  return handle.task_id;
}

t.test('taskyard plugin install uploads the tarball and installs it on the target', async (t) => {
  const tarball = await packPlugin(t, { name: 'cli-plugin', version: '3.1.4', tasksJs: greetTasks('cli') }, true);
  const run = await cli(['plugin', 'install', tarball, '--target', remote.url], { TASKYARD_TARGET_TOKEN: 'remote-token' });
  t.equal(run.code, 0, run.stderr);
  t.same(JSON.parse(run.stdout), { answer: { name: 'cli-plugin', version: '3.1.4', tasks: ['greet'], restart_required: false }, success: true, metadata: {} });
  t.same((await remote.call('list_plugins')).body.answer, [{ name: 'cli-plugin', version: '3.1.4', tasks: ['greet'] }]);

  const junk = join(home, 'junk.tgz');
  await writeFile(junk, 'not a tarball');
  const broken = await cli(['plugin', 'install', junk, '--target', remote.url, '--token', 'remote-token']);
  t.equal(broken.code, 1, 'a failed install exits 1');
  t.match(JSON.parse(broken.stdout), { success: false, answer: /^ValueError: npm install failed/ });

  t.equal((await cli(['plugin', 'install', join(home, 'missing.tgz'), '--target', remote.url])).code, 2, 'a missing file is a usage error');
  t.equal((await cli(['plugin', 'remove', tarball])).code, 2, 'unknown action');
  const denied = await cli(['plugin', 'install', tarball, '--target', remote.url, '--token', 'wrong']);
  t.equal(denied.code, 1);
  t.match(denied.stderr, /HTTP 401: Invalid bearer token/);
});

t.test('taskyard sync push moves finished Tasks to the target', async (t) => {
  const local = await startTestService(t);
  const first = await finishedDemo(local, 'first');
  const second = await finishedDemo(local, 'second');
  const run = await cli(['sync', 'push', first, second, '--target', remote.url, '--token', 'remote-token', '--workspace', local.workspace]);
  t.equal(run.code, 0, run.stderr);
  t.same(JSON.parse(run.stdout), { answer: { applied: [first, second], deleted: [] }, success: true, metadata: {} });
  t.same((await remote.call('status', { task_id: first })).body.answer, (await local.call('status', { task_id: first })).body.answer, 'the status arrived as it was');

  const unknown = await cli(['sync', 'push', 'base#demo#nothing', '--target', remote.url, '--token', 'remote-token', '--workspace', local.workspace]);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /Task base#demo#nothing has no directory/);
  t.equal((await cli(['sync', 'push', first, '--workspace', local.workspace])).code, 2, 'where to push must be said');
  t.equal((await cli(['sync', 'push', '--target', remote.url])).code, 2, 'at least one Task ID');
});
