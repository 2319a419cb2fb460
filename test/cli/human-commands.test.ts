import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parseReply } from '../helpers/jobs-client.js';
import { runCli, type CliRun } from '../helpers/run-cli.js';
import { startTestService, waitFor } from '../helpers/service.js';

const home = await mkdtemp(join(tmpdir(), 'taskyard-cli-home-'));
t.teardown(() => rm(home, { recursive: true, force: true }));
const svc = await startTestService(t);

/** The CLI against the test service; HOME is a temp dir so no real token file is read. */
function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runCli(args, { HOME: home, TASKYARD_URL: svc.url, TASKYARD_TOKEN: svc.token ?? '', ...env });
}

t.test('a missing required flag is a usage error naming the flag, before any call', async (t) => {
  const run = await cli(['read_task_log', '--offset', '0']);
  t.equal(run.code, 2);
  t.match(run.stderr, 'missing required --task-id');
  t.notMatch(run.stderr, /HTTP 422/);
  // wait_task without --run-id waits for the current run, looked up first (cli.test.ts): of a
  // Task that does not exist, that lookup says so.
  const unknown = await cli(['wait_task', '--task-id', 'base#demo#x']);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /the current run of base#demo#x could not be looked up: KeyError: /);
  const status = await cli(['status']);
  t.equal(status.code, 2);
  t.match(status.stderr, 'missing required --task-id');
  const input = await cli(['submit', '--task', 'demo', '--x', '1']);
  t.equal(input.code, 2, "a Task's own required input too");
  t.match(input.stderr, 'missing required --y');
});

t.test('a refused token says where the token is looked for and how to get it', async (t) => {
  const run = await cli(['version'], { TASKYARD_TOKEN: '' });
  t.equal(run.code, 1);
  t.match(run.stderr, 'HTTP 401: Invalid bearer token');
  t.match(run.stderr, /--token, then TASKYARD_TOKEN, then the token file .*\.taskyard\/token/);
  t.match(run.stderr, /does not exist/, 'says the token file is missing');
  t.match(run.stderr, /#token=/, 'says where to get it');
  const wrong = await cli(['version'], { TASKYARD_TOKEN: 'nope' });
  t.match(wrong.stderr, 'The token sent came from TASKYARD_TOKEN');
});

t.test('help without a reachable service shows what it can and says why', async (t) => {
  const env = { TASKYARD_URL: 'http://127.0.0.1:1' };
  const shell = await cli(['shell', '--help'], env);
  t.equal(shell.code, 0);
  t.match(shell.stdout, 'usage: taskyard shell');
  t.match(shell.stdout, /could not be asked: cannot reach http:\/\/127\.0\.0\.1:1/);
  t.match(shell.stdout, '--token TOKEN');
  const general = await cli(['--help'], env);
  t.equal(general.code, 0);
  for (const command of ['plugin install', 'plugin uninstall', 'plugin list', 'plugin init', 'sync push', 'logs TASK_ID', 'task run MODULE']) {
    t.match(general.stdout, `taskyard ${command}`, `general help lists ${command}`);
  }
  t.match(general.stdout, /could not be asked for its Jobs/);
  const refused = await cli(['shell', '--help'], { TASKYARD_TOKEN: 'nope' });
  t.equal(refused.code, 0, 'a refused token does not stop help either');
  t.match(refused.stdout, /could not be asked: HTTP 401: Invalid bearer token/);
});

t.test('submit --task demo --help shows the Task’s own inputs', async (t) => {
  const run = await cli(['submit', '--task', 'demo', '--help']);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /--x <integer>\s+\(required\)/);
  t.match(run.stdout, /--fail <boolean>\s+\(default false\)/);
  t.match(run.stdout, /--source-tasks <string>/);
  const unknown = await cli(['submit', '--task', 'nope', '--help']);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /ValueError: .*demo/, 'an unknown Task names the available ones');
});

t.test('a repeated --source-tasks joins the IDs with commas', async (t) => {
  const run = await cli(['submit', '--task', 'demo', '--x', '1', '--y', '2', '--source-tasks', 'base#demo#a', '--source-tasks', 'base#demo#b']);
  t.equal(run.code, 0, run.stderr);
  const { task_id } = parseReply('submit', run.stdout).answer;
  const status = await svc.call('status', { task_id });
  t.equal(status.body.answer.config.source_tasks, 'base#demo#a,base#demo#b');
});

t.test('submit --follow streams progress and log, and exits with the outcome', async (t) => {
  const good = await cli(['submit', '--task', 'sleep', '--seconds', '0.2', '--steps', '2', '--follow']);
  t.equal(good.code, 0, good.stderr);
  t.match(good.stdout, /step 1\/2[\s\S]*step 2\/2/, 'log lines on stdout');
  t.match(good.stderr, /submitted base#sleep#/);
  t.match(good.stderr, /\[progress\] sleep/);
  t.match(good.stderr, /base#sleep#\S+\s+succeeded/);
  const bad = await cli(['submit', '--task', 'demo', '--x', '1', '--y', '1', '--fail', '--follow']);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /failed .*exit code 1 .*RuntimeError: Demo failure requested/);
});

t.test('logs prints the raw log text; --follow waits for the end', async (t) => {
  const submitted = await svc.call('submit', { task: 'sleep', seconds: 0.3, steps: 3 });
  const { task_id } = submitted.body.answer;
  const followed = await cli(['logs', task_id, '--follow']);
  t.equal(followed.code, 0, followed.stderr);
  t.match(followed.stdout, /step 1\/3[\s\S]*step 3\/3/);
  const printed = await cli(['logs', task_id]);
  t.equal(printed.code, 0, printed.stderr);
  const dir = join(svc.workspace, 'base', task_id);
  t.equal(printed.stdout, await readFile(join(dir, 'task.log'), 'utf8'), 'exactly the log file, not JSON');
  const unknown = await cli(['logs', 'base#demo#nope']);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /KeyError/);
  t.equal((await cli(['logs'])).code, 2);
});

t.test('--output text prints short summaries; JSON stays the default', async (t) => {
  const submitted = await cli(['submit', '--task', 'demo', '--x', '2', '--y', '3', '--task-name', 'texty', '--output', 'text']);
  t.equal(submitted.code, 0, submitted.stderr);
  t.match(submitted.stdout, /^submitted base#demo#texty {2}\(run \w+\)/);
  await waitFor(async () => (await svc.call('status', { task_id: 'base#demo#texty' })).body.answer.state === 'succeeded', 20_000);
  const status = await cli(['status', '--task-id', 'base#demo#texty', '--output', 'text']);
  t.match(status.stdout, /^base#demo#texty {2}succeeded in \d+\.\d s\nresult: \{"result":5,"branch":"different","operands":\["x","y"\]\}/);
  const ids = await cli(['list_task_ids', '--output', 'text']);
  t.match(ids.stdout, /^base#demo#texty$/m, 'one ID a line');
  const json = await cli(['status', '--task-id', 'base#demo#texty']);
  t.equal(JSON.parse(json.stdout).answer.state, 'succeeded');
  const bad = await cli(['version', '--output', 'yaml']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, '--output is json or text');
});

t.test('plugin uninstall and list are commands; a directory is packed before install', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-plugin-dir-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'dir-plugin', version: '1.0.0', type: 'module', taskyard: { tasks: './dist/tasks.js' } }));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'dir-plugin', version: '1.0.0', type: 'module', taskyard: { tasks: './src/tasks.ts' } }));
  const typescript = await cli(['plugin', 'install', dir]);
  t.equal(typescript.code, 2);
  t.match(typescript.stderr, /a TypeScript file Node does not run: point it at the compiled \.js/);
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'dir-plugin', version: '1.0.0', type: 'module', taskyard: { tasks: './dist/tasks.js' } }));
  const unbuilt = await cli(['plugin', 'install', dir]);
  t.equal(unbuilt.code, 2);
  t.match(unbuilt.stderr, /does not exist yet: build the plugin first/);
  await mkdir(join(dir, 'dist'));
  await writeFile(
    join(dir, 'dist', 'tasks.js'),
    `import { defineTask } from 'taskyard/task';
export default [defineTask({ name: 'dir-task', taskType: 'dirs', description: 'Answers one.', input: { type: 'object', properties: {} }, output: { type: 'object', properties: { one: { type: 'integer' } } }, run: () => ({ one: 1 }) })];\n`,
  );
  const installed = await cli(['plugin', 'install', dir]);
  t.equal(installed.code, 0, installed.stderr);
  t.match(JSON.parse(installed.stdout).answer, { name: 'dir-plugin', version: '1.0.0', tasks: ['dir-task'] });
  const listed = await cli(['plugin', 'list', '--output', 'text']);
  t.equal(listed.code, 0, listed.stderr);
  t.match(listed.stdout, /^NAME +.*\ndir-plugin +/, 'a table, one plugin a row');
  const removed = await cli(['plugin', 'uninstall', 'dir-plugin']);
  t.equal(removed.code, 0, removed.stderr);
  t.match(JSON.parse(removed.stdout).answer, { name: 'dir-plugin' });
  t.same(JSON.parse((await cli(['plugin', 'list'])).stdout).answer, []);
  const missing = await cli(['plugin', 'install', join(dir, 'nope.tgz')]);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /nope\.tgz does not exist/);
  const noName = await cli(['plugin', 'uninstall']);
  t.equal(noName.code, 2);
  t.match(noName.stderr, 'give exactly one plugin name');
});
