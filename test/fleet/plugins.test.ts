import { access, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { connectMcp } from '../helpers/mcp-client.js';
import { startTestService, waitFor } from '../helpers/service.js';
import { greetTasks, LINGER_TASK, packPlugin, upload } from './plugin-fixture.js';

const PLUGIN = 'taskyard-plugin-greet';

/*
 * One service for the whole file, its installed set passed from test to test (each test says what
 * it starts from): empty, then left with v1 for the broken installs. v1 is packed once, by the
 * real `npm pack`; the other packages are packed in process into the same layout.
 */
// Config's resource override for a plugin Task applies from its install on (time_limit_s: 77).
const svc = await startTestService(t, { config: { tasks: { greet: { resources: { time_limit_s: 77 } } } } });
const v1 = await packPlugin(t, { name: PLUGIN, version: '1.0.0', tasksJs: greetTasks('v1') });

async function install(file: string) {
  const staged = await upload(svc, file);
  return { staged, ...(await svc.call('install_plugin', { path: staged.path, sha256: staged.sha256 })) };
}

/** Submits a Task and waits for its terminal status. */
async function runTask(task: string, inputs: Record<string, unknown>) {
  const submitted = await svc.call('submit', { task, ...inputs });
  if (!submitted.body.success) return submitted.body;
  const handle = submitted.body.answer;
  return (await svc.call('wait_task', { task_id: handle.task_id, run_id: handle.run_id })).body;
}

t.test('a plugin is installed, run, upgraded and uninstalled without a restart', async (t) => {
  t.match((await runTask('greet', { who: 'ada' })).answer, /^ValueError: Unknown task "greet"/, 'unknown before install');

  const installed = await install(v1);
  t.equal(installed.status, 200);
  t.same(installed.body, { answer: { name: PLUGIN, version: '1.0.0', tasks: ['greet'], restart_required: false }, success: true, metadata: {} });
  await t.rejects(access(join(svc.workspace, installed.staged.path)), 'the staged tarball is removed');

  const first = await runTask('greet', { who: 'ada' });
  t.equal(first.success, true);
  t.match(first.answer, { state: 'succeeded', result: { message: 'hello ada from v1' } });
  t.match((await svc.call('get_task_definition', { task: 'greet' })).body.answer, { name: 'greet', source: 'plugin', plugin: PLUGIN, task_type: 'greetings', resources: { time_limit_s: 77 } }, "the installed definition, with config's resource override");

  const mcp = await connectMcp(t, svc.url, svc.token);
  const listed = await mcp.callTool({ name: 'list_plugins', arguments: {} });
  t.same(listed.structuredContent, { answer: [{ name: PLUGIN, version: '1.0.0', tasks: ['greet'] }], success: true, metadata: {} }, 'list_plugins over MCP');

  const v2 = await packPlugin(t, { name: PLUGIN, version: '2.0.0', tasksJs: greetTasks('v2', LINGER_TASK) }, true);
  const stagedV2 = await upload(svc, v2);
  const upgraded = await mcp.callTool({ name: 'install_plugin', arguments: { path: stagedV2.path, sha256: stagedV2.sha256 } });
  t.same(upgraded.structuredContent, { answer: { name: PLUGIN, version: '2.0.0', tasks: ['greet', 'linger'], restart_required: false }, success: true, metadata: {} }, 'installing another version (over MCP) upgrades');
  t.match((await runTask('greet', { who: 'bob' })).answer, { result: { message: 'hello bob from v2' } }, 'the new code runs');
  t.same((await svc.call('list_plugins')).body.answer, [{ name: PLUGIN, version: '2.0.0', tasks: ['greet', 'linger'] }]);

  const lingering = (await svc.call('submit', { task: 'linger' })).body.answer;
  await waitFor(async () => (await svc.call('status', { task_id: lingering.task_id })).body.answer.state === 'running', 30_000, 'linger to run');
  const refused = await svc.call('uninstall_plugin', { name: PLUGIN });
  t.equal(refused.body.success, false);
  t.match(refused.body.answer, /^RuntimeError: plugin taskyard-plugin-greet cannot be removed while its Task linger is queued or running/);
  t.equal((await svc.call('cancel', { task_id: lingering.task_id })).body.answer, true);
  await svc.call('wait_task', { task_id: lingering.task_id, run_id: lingering.run_id });

  const sse = await svc.events('uninstall_plugin', { name: PLUGIN });
  t.same(sse.events.at(-1), { kind: 'result', answer: { name: PLUGIN, version: '2.0.0', tasks: ['greet', 'linger'], restart_required: false }, success: true, metadata: {} }, 'uninstall over SSE');
  t.same((await svc.call('list_plugins')).body.answer, []);
  t.match((await runTask('greet', { who: 'ada' })).answer, /^ValueError: Unknown task "greet"/, 'its Tasks are gone');
  t.match((await svc.call('uninstall_plugin', { name: PLUGIN })).body.answer, /^KeyError: plugin taskyard-plugin-greet is not installed/);
  const again = await mcp.callTool({ name: 'uninstall_plugin', arguments: { name: PLUGIN } });
  t.equal(again.isError, true, 'uninstall over MCP: a business failure');
  t.same((await svc.events('list_plugins')).events.at(-1), { kind: 'result', answer: [], success: true, metadata: {} }, 'list_plugins over SSE');
});

t.test('the staged file must match its sha256 and be a staged upload', async (t) => {
  t.same((await svc.call('list_plugins')).body.answer, [], 'starts from no plugins');
  const staged = await upload(svc, v1);
  const wrong = await svc.call('install_plugin', { path: staged.path, sha256: '0'.repeat(64) });
  t.match(wrong.body, { success: false, answer: /^ValueError: sha256 mismatch/ });
  await writeFile(join(svc.workspace, 'loose.tgz'), 'x');
  t.match((await svc.call('install_plugin', { path: 'loose.tgz', sha256: staged.sha256 })).body.answer, /^ValueError: path "[^"]+" is not a staged upload/);
  t.match((await svc.call('install_plugin', { path: '../outside.tgz', sha256: staged.sha256 })).body.answer, /^ValueError: path "..\/outside.tgz" is not a staged upload/);
  t.match((await svc.call('install_plugin', { path: `tmp/${'a'.repeat(64)}/gone.tgz`, sha256: staged.sha256 })).body.answer, /^FileNotFoundError: staged file not found/);
  const linkDir = join(svc.workspace, 'tmp', staged.sha256);
  await symlink('/etc/passwd', join(linkDir, 'outside.tgz'));
  await symlink(join(svc.workspace, 'loose.tgz'), join(linkDir, 'inside.tgz'));
  t.match((await svc.call('install_plugin', { path: `tmp/${staged.sha256}/outside.tgz`, sha256: staged.sha256 })).body.answer, /^PermissionError: path escapes the workspace/, 'a staged link leading outside');
  t.match((await svc.call('install_plugin', { path: `tmp/${staged.sha256}/inside.tgz`, sha256: staged.sha256 })).body.answer, /^ValueError: not a staged file: /, 'a staged link to a workspace file outside tmp');
  await Promise.all(['outside.tgz', 'inside.tgz'].map((n) => unlink(join(linkDir, n))));
  t.equal((await svc.call('install_plugin', { path: staged.path })).status, 422, 'sha256 is required');
  t.equal((await svc.call('install_plugin', { path: staged.path, sha256: 'xyz' })).status, 422);
  t.equal((await svc.call('install_plugin', { path: staged.path, sha256: staged.sha256, extra: 1 })).status, 422);
  t.same((await svc.call('list_plugins')).body.answer, []);
  const right = await svc.events('install_plugin', { path: staged.path, sha256: staged.sha256.toUpperCase() });
  t.match(right.events.at(-1), { kind: 'result', success: true, answer: { name: PLUGIN, version: '1.0.0' } }, 'after all that, the right call works (over SSE)');
});

t.test('broken plugins fail with the reason and leave the installed set as it was', async (t) => {
  const good = [{ name: PLUGIN, version: '1.0.0', tasks: ['greet'] }];
  t.same((await svc.call('list_plugins')).body.answer, good, 'starts from v1, installed by the test before');
  const task = (fields: string) => `import { defineTask } from 'taskyard/task';
export default [{ name: 'broken', taskType: 'b', input: { type: 'object' }, output: { type: 'object' }, run: () => ({}), ${fields} }];`;

  const cases: Array<[string, () => Promise<string>, RegExp]> = [
    ['a bad tarball', async () => {
      const file = join(svc.workspace, '..', `junk-${process.pid}.tgz`);
      await writeFile(file, 'this is not a gzip file');
      t.teardown(() => import('node:fs/promises').then((fs) => fs.rm(file, { force: true })));
      return file;
    }, /^ValueError: npm install failed: npm error/],
    ['a missing module', () => packPlugin(t, { name: 'p-missing', version: '1.0.0', tasksJs: '', taskyard: { tasks: './nope.js' } }, true), /^ValueError: plugin p-missing cannot be installed: .*nope\.js/],
    ['a module that throws at import', () => packPlugin(t, { name: 'p-throws', version: '1.0.0', tasksJs: 'throw new Error("kaboom at import");' }, true), /^ValueError: plugin p-throws cannot be installed: .*kaboom at import/],
    ['a bad schema', () => packPlugin(t, { name: 'p-schema', version: '1.0.0', tasksJs: task("description: 'A task with a string schema.', input: { type: 'string' }") }, true), /^ValueError: plugin p-schema cannot be installed: .*input schema must describe an object/],
    ['an invalid JSON Schema', () => packPlugin(t, { name: 'p-ajv', version: '1.0.0', tasksJs: task("description: 'A task whose schema is not valid.', input: { type: 'object', properties: { x: { type: 'bogus' } } }") }, true), /^ValueError: plugin p-ajv: Task broken has an invalid input schema/],
    ['a missing description', () => packPlugin(t, { name: 'p-nodesc', version: '1.0.0', tasksJs: task("description: ''") }, true), /^ValueError: plugin p-nodesc cannot be installed: .*a detailed description is required/],
    ['no taskyard field', () => packPlugin(t, { name: 'p-plain', version: '1.0.0', tasksJs: greetTasks('x'), taskyard: null }, true), /^ValueError: package p-plain is not a taskyard plugin/],
    ['a Task name taken by a built-in', () => packPlugin(t, { name: 'p-demo', version: '1.0.0', tasksJs: task("name: 'demo', description: 'Claims the name of the built-in demo.'") }, true), /^ValueError: plugin p-demo cannot be installed: .*Task name demo is already registered/],
    ['a Task name taken by another plugin', () => packPlugin(t, { name: 'a-first-in-order', version: '1.0.0', tasksJs: greetTasks('clash') }, true), /^ValueError: plugin a-first-in-order cannot be installed: .*Task name greet is already registered/],
  ];
  for (const [what, make, answer] of cases) {
    const result = await install(await make());
    t.equal(result.status, 200, what);
    t.equal(result.body.success, false, what);
    t.match(result.body.answer, answer, what);
    t.notMatch(String(result.body.answer), svc.workspace, `${what}: no workspace paths in the answer`);
    t.same((await svc.call('list_plugins')).body.answer, good, `${what}: installed set unchanged`);
  }
  t.match((await runTask('greet', { who: 'cy' })).answer, { result: { message: 'hello cy from v1' } }, 'the installed plugin still works');
  t.equal((await svc.call('list_installed_task_definitions')).body.success, true, 'the catalog stays valid');
});
