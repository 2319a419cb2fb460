import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { connectMcp } from '../helpers/mcp-client.js';
import { startTestService } from '../helpers/service.js';
import { makeWorkspace, submitOk, waitTask, writeFixturePlugin } from '../tasks/task-helpers.js';
import { greetTasks, packPlugin, upload } from './plugin-fixture.js';

/** Adds a hand-placed plugin to the workspace's prefix and to its list of installed plugins. */
async function addPlugin(workspace: string, name: string, tasksJs: string): Promise<void> {
  const prefix = join(workspace, '.taskyard', 'plugins');
  const dir = join(prefix, 'node_modules', name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', type: 'module', taskyard: { tasks: './tasks.js' } }));
  await writeFile(join(dir, 'tasks.js'), tasksJs);
  const { readFile } = await import('node:fs/promises');
  const list = JSON.parse(await readFile(join(prefix, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  list.dependencies[name] = '1.0.0';
  await writeFile(join(prefix, 'package.json'), JSON.stringify(list));
}

t.test('a plugin that keeps a timer open at import installs, and its Task runs', async (t) => {
  const svc = await startTestService(t);
  const file = await packPlugin(t, { name: 'p-timer', version: '1.0.0', tasksJs: `setInterval(() => {}, 1000);\n${greetTasks('timer')}` }, true);
  const staged = await upload(svc, file);
  const started = Date.now();
  const installed = await svc.call('install_plugin', { path: staged.path, sha256: staged.sha256 });
  t.same(installed.body, { answer: { name: 'p-timer', version: '1.0.0', tasks: ['greet'], restart_required: false }, success: true, metadata: {} });
  t.ok(Date.now() - started < 15_000, `installed without waiting for the describe timeout (${Date.now() - started} ms)`);
  const { task_id, run_id } = (await svc.call('submit', { task: 'greet', who: 'ada' })).body.answer;
  t.match((await svc.call('wait_task', { task_id, run_id })).body.answer, { state: 'succeeded', result: { message: 'hello ada from timer' } });
});

t.test("plugins that crash or hang the describer are named with the cause, and the other plugins' Tasks stay", async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace);
  await addPlugin(workspace, 'a-exits', 'process.exit(3);\n');
  await addPlugin(workspace, 'b-hangs', 'await new Promise(() => {});\n');
  const svc = await startTestService(t, { workspace });
  const list = await svc.call('list_installed_task_definitions');
  t.equal(list.body.success, false);
  t.match(list.body.answer, /plugin a-exits: the describer exited with code 3/, 'the crashing plugin and the cause');
  t.match(list.body.answer, /plugin b-hangs: its module did not finish loading within 10 s/, 'the hanging plugin and the cause');
  t.notMatch(String(list.body.answer), /Command failed/);
  t.match((await svc.call('get_task_definition', { task: 'echo-log' })).body, { success: true, answer: { plugin: 'taskyard-fixture' } }, 'the good plugin is still described');
  const run = await waitTask(svc, await submitOk(t, svc, { task: 'echo-log', text: 'still here' }));
  t.equal(run.status.state, 'succeeded', 'and its Task runs');
});

t.test('a garbled list of installed plugins is a clear error everywhere, and no plugin Task is offered from it', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace);
  await writeFile(join(workspace, '.taskyard', 'plugins', 'package.json'), '{"dependencies": {"taskyard-fixture": "1.0.0"');
  const svc = await startTestService(t, { workspace });
  const garbled = /^ValueError: the list of installed plugins \(\.taskyard\/plugins\/package\.json\) cannot be read \(.*JSON.*\): restore it, or delete it and install the plugins again$/;
  t.match((await svc.call('list_plugins')).body, { success: false, answer: garbled }, 'list_plugins says so instead of []');
  const mcp = await connectMcp(t, svc.url, svc.token);
  const listed = await mcp.callTool({ name: 'list_plugins', arguments: {} });
  t.equal(listed.isError, true, 'over MCP too');
  t.match(listed.structuredContent, { answer: garbled });
  t.match((await svc.call('list_installed_task_definitions')).body, { success: false, answer: /the list of installed plugins .* cannot be read/ });
  t.match((await svc.call('submit', { task: 'echo-log', text: 'x' })).body.answer, /^ValueError: Unknown task "echo-log"/, 'the Task of a plugin the list does not show is not offered');
  const staged = await upload(svc, await packPlugin(t, { name: 'p-new', version: '1.0.0', tasksJs: greetTasks('new') }, true));
  t.match((await svc.call('install_plugin', { path: staged.path, sha256: staged.sha256 })).body, { success: false, answer: garbled }, 'install_plugin says so before npm trips on it');
  t.notMatch(JSON.stringify((await svc.call('list_plugins')).body), workspace, 'no workspace path in the answer');

  await writeFile(join(workspace, '.taskyard', 'plugins', 'package.json'), JSON.stringify({ dependencies: { 'taskyard-fixture': 7 } }));
  t.match((await svc.call('list_plugins')).body.answer, /^ValueError: the list of installed plugins \(\.taskyard\/plugins\/package\.json\) is not an npm package\.json/, 'a wrong shape is said too');
});

t.test("a plugin that forges the describer's answer is named, and the other plugins' Tasks stay", async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace);
  // Loaded last, it rewrites what the describer prints after it: the answer no longer has `errors`.
  const forges = 'const write = process.stdout.write.bind(process.stdout);\nprocess.stdout.write = (chunk, ...rest) => write(String(chunk).replace(\'"errors":\', \'"errorz":\'), ...rest);\nexport default [];\n';
  await addPlugin(workspace, 'z-forges', forges);
  const svc = await startTestService(t, { workspace });
  const list = await svc.call('list_installed_task_definitions');
  t.equal(list.body.success, false);
  t.match(list.body.answer, /plugin z-forges: the describer's answer is not valid: /, 'the forging plugin and the cause');
  t.match((await svc.call('get_task_definition', { task: 'echo-log' })).body, { success: true, answer: { plugin: 'taskyard-fixture' } }, 'the good plugin is still described');
});
