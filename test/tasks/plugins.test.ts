import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { defineTask, DefinitionError } from '../../runner/task-sdk.js';
import { waitFor } from '../helpers/service.js';
import { groupGone, isRunning, makeWorkspace, startTaskService, submitOk, waitState, waitTask, writeFixturePlugin } from './task-helpers.js';

const valid = { name: 'ok-task', taskType: 'things', description: 'A real description of the task.', input: { type: 'object', properties: {} }, output: { type: 'object', properties: {} }, run: () => ({}) };

t.test('defineTask rejects bad names, types, descriptions and reserved fields with a reason', async (t) => {
  t.equal(defineTask(valid).task_type, 'things');
  t.throws(() => defineTask({ ...valid, name: 'bad#name' }), DefinitionError);
  t.throws(() => defineTask({ ...valid, taskType: '../up' }), /task type "..\/up" is invalid/);
  t.throws(() => defineTask({ ...valid, taskType: 'tmp' }), /reserved/);
  t.throws(() => defineTask({ ...valid, description: '' }), /detailed description is required/);
  t.throws(() => defineTask({ ...valid, description: '   todo   ' }), /detailed description is required/);
  t.throws(() => defineTask({ ...valid, input: { type: 'object', properties: { task_name: { type: 'string' } } } }), /must not declare task_name/);
  t.throws(() => defineTask({ ...valid, output: { type: 'object', properties: { artifacts: {} } } }), /must not declare artifacts/);
  t.throws(() => defineTask({ ...valid, input: { type: 'array' } }), /must describe an object/);
});

t.test('plugin discovery: definitions described by a child process, runs, artifacts, custom exit', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace);
  const svc = await startTaskService(t, { workspace });
  const defs = (await svc.call('list_installed_task_definitions')).body.answer;
  t.same(defs.map((d) => d.name), ['artifacts', 'command', 'custom-exit', 'demo', 'echo-log', 'hostile-files', 'many-steps', 'sleep', 'stubborn'], 'sorted by registration name');
  const stubborn = defs.find((d) => d.name === 'stubborn')!;
  t.same([stubborn.source, stubborn.plugin, stubborn.task_type], ['plugin', 'taskyard-fixture', 'fixture'], 'plain-object definitions are accepted');

  const art = await submitOk(t, svc, { task: 'artifacts' });
  const done = await waitTask(svc, art);
  t.equal(done.status.state, 'succeeded', done.status.error);
  const result = done.status['result'] as { ratio: unknown; nested: { values: unknown[] }; artifacts: Record<string, { path: string; size: number; sha256: string }> };
  t.equal(result.ratio, null, 'NaN is recorded as null');
  t.same(result.nested.values, [1, null], 'nested Infinity too');
  const sha256 = createHash('sha256').update('hello artifact\n').digest('hex');
  t.same(result.artifacts['greeting'], { path: 'out.txt', size: 15, sha256 }, 'size and sha256 computed by the runtime');
  const dir = join(workspace, 'fixture', art.task_id);
  const metadata = JSON.parse(readFileSync(join(dir, 'metadata.json'), 'utf8')) as { output_params: unknown };
  t.same(metadata.output_params, result);

  const escape = await submitOk(t, svc, { task: 'artifacts', escape: true });
  const escaped = await waitTask(svc, escape);
  t.equal(escaped.status.state, 'failed', 'an artifact symlinked outside the task dir fails the Task');
  t.match(escaped.status.error, /^PermissionError: artifact path escapes the task directory: link.txt$/);

  const custom = await submitOk(t, svc, { task: 'custom-exit' });
  const customDone = await waitTask(svc, custom);
  t.same([customDone.status.state, customDone.status.exit_code, customDone.status.error], ['failed', 7, 'ValueError: custom failure']);
  t.notOk(existsSync(join(workspace, 'fixture', custom.task_id, 'metadata.json')));
});

t.test('cancel escalates to SIGKILL and reaches descendants that left the group', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace);
  // A short grace (configurable) instead of the production 3 s: the test still proves the wait.
  const graceMs = 600;
  const svc = await startTaskService(t, { workspace, config: { service: { cancel_grace_ms: graceMs } } });
  const handle = await submitOk(t, svc, { task: 'stubborn' });
  const running = await waitState(svc, handle.task_id, 'running');
  const logFile = join(workspace, 'fixture', handle.task_id, 'task.log');
  const pids = await waitFor(() => /pids (\d+) (\d+)/.exec(existsSync(logFile) ? readFileSync(logFile, 'utf8') : '')?.slice(1).map(Number), 10_000, 'child pids in the log');
  t.teardown(() => pids.forEach((p) => { try { process.kill(p, 'SIGKILL'); } catch { /* gone */ } }));
  t.same(await Promise.all(pids.map(isRunning)), [true, true], 'both descendants run');
  const started = Date.now();
  t.equal((await svc.call('cancel', { task_id: handle.task_id })).body.answer, true);
  t.ok(Date.now() - started >= graceMs, 'the SIGTERM-ignoring child needed the SIGKILL after the grace period');
  t.ok(await groupGone(running.pid!), 'process group gone');
  t.same(await Promise.all(pids.map(isRunning)), [false, false], 'descendants gone, including the one that left the group');
});

t.test('an invalid plugin definition makes the listing fail with the reason', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace, { name: 'broken-plugin', tasks: "export default [{ name: 'broken', task_type: 'x', description: '', input: {}, output: {}, run() {} }];" });
  const svc = await startTaskService(t, { workspace });
  const list = await svc.call('list_installed_task_definitions');
  t.equal(list.body.success, false);
  t.match(list.body.answer, /^ValueError: .*broken-plugin.*broken.*description/);
  const stillUsable = await submitOk(t, svc, { task: 'demo', x: 1, y: 2 });
  t.equal((await waitTask(svc, stillUsable)).status.state, 'succeeded', 'valid definitions still run');
});
