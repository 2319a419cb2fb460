import t from 'tap';
import { readFileSync } from 'node:fs';
import { readProcess } from '../../workers/process-tree.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/service.js';
import { groupGone, isRunning, startTaskService, statusOf, submitOk, waitState, waitTask } from './task-helpers.js';

// One service for the tests that need nothing of their own (no configuration, no killed spawner):
// each works on Tasks of its own.
const shared = startTaskService(t);

t.test('fixed task_name: an active Task is FileExistsError, a finished one is replaced', async (t) => {
  const svc = await shared;
  const first = await submitOk(t, svc, { task: 'sleep', seconds: 30, task_name: 'fixed-1' });
  t.equal(first.task_id, 'base#sleep#fixed-1');
  const clash = await svc.call('submit', { task: 'sleep', seconds: 1, task_name: 'fixed-1' });
  t.equal(clash.body.success, false);
  t.match(clash.body.answer, /^FileExistsError: /);
  t.equal((await svc.call('cancel', { task_id: first.task_id })).body.answer, true);
  const second = await submitOk(t, svc, { task: 'sleep', seconds: 0, task_name: 'fixed-1' });
  t.equal(second.task_id, first.task_id);
  t.not(second.run_id, first.run_id, 'a new run');
  t.equal((await waitTask(svc, second)).status.state, 'succeeded');
  const stale = await svc.call('wait_task', { task_id: first.task_id, run_id: first.run_id });
  t.equal(stale.body.success, false);
  t.match(stale.body.answer, /^ValueError: run_id .* is not the current execution/);
  const ids = (await svc.call('list_task_ids')).body.answer;
  t.same(ids.filter((id) => id.endsWith('#fixed-1')), [first.task_id], 'one record for the name');
});

t.test('max_running_tasks keeps extra submissions queued and starts them in order', async (t) => {
  const svc = await startTaskService(t, { config: { service: { max_running_tasks: 1 } } });
  const a = await submitOk(t, svc, { task: 'sleep', seconds: 30, task_name: 'q-a' });
  const b = await submitOk(t, svc, { task: 'sleep', seconds: 0, task_name: 'q-b' });
  const c = await submitOk(t, svc, { task: 'demo', x: 1, y: 1, task_name: 'q-c' });
  await waitState(svc, a.task_id, 'running');
  t.equal((await statusOf(svc, b.task_id)).state, 'queued', 'second waits for a slot');
  t.equal((await statusOf(svc, c.task_id)).state, 'queued', 'third waits too');
  t.equal((await svc.call('cancel', { task_id: c.task_id })).body.answer, true, 'a queued Task can be cancelled');
  const cancelled = await statusOf(svc, c.task_id);
  t.same([cancelled.state, cancelled.exit_code, cancelled.pid], ['cancelled', 130, null]);
  t.equal((await svc.call('cancel', { task_id: a.task_id })).body.answer, true);
  const bDone = await waitTask(svc, b);
  t.equal(bDone.status.state, 'succeeded', 'the queued Task ran once the slot was free');
  const statuses = (await svc.call('list_task_statuses')).body.answer;
  t.same(statuses.map((s) => s.task_id), [c.task_id, b.task_id, a.task_id], 'newest first');
});

t.test('cancel of a sleep: SIGTERM to the group, cancelled with 130, group gone; over MCP and SSE', async (t) => {
  const svc = await shared;
  const handle = await submitOk(t, svc, { task: 'sleep', seconds: 60, steps: 60 });
  const running = await waitState(svc, handle.task_id, 'running');
  const pid = running.pid!;
  t.ok(await isRunning(pid), 'worker runs');
  const mcp = await connectMcp(t, svc.url, svc.token);
  const cancelled = await mcp.callTool({ name: 'cancel', arguments: { task_id: handle.task_id } });
  t.equal((cancelled.structuredContent as { answer: boolean }).answer, true, 'this call cancelled it');
  const status = await statusOf(svc, handle.task_id);
  t.equal(status.state, 'cancelled');
  t.equal(status.exit_code, 130);
  t.match(status.error, /^CancelledError: /);
  await waitFor(async () => (await groupGone(pid)) && !(await isRunning(pid)), 5000, 'process group gone');
  t.pass('process group is gone');
  const again = await svc.events('cancel', { task_id: handle.task_id });
  t.same(again.events.at(-1), { kind: 'result', answer: false, success: true, metadata: {} }, 'cancelling a terminal Task answers false');
  const unknown = await svc.call('cancel', { task_id: 'base#sleep#none' });
  t.same(unknown.body, { answer: 'KeyError: Unknown task base#sleep#none', success: false, metadata: {} }, 'an unknown Task is a KeyError, as for status');
  const waited = await waitTask(svc, handle);
  t.equal(waited.success, false);
  t.equal(waited.status.state, 'cancelled');
});

t.test('two concurrent cancels: exactly one answers true', async (t) => {
  const svc = await shared;
  const handle = await submitOk(t, svc, { task: 'sleep', seconds: 60 });
  await waitState(svc, handle.task_id, 'running');
  const answers = await Promise.all([svc.call('cancel', { task_id: handle.task_id }), svc.call('cancel', { task_id: handle.task_id })]);
  t.same(answers.map((a) => a.body.answer).sort(), [false, true]);
});

t.test('a spawner that dies loses no Task: its runs are watched through /proc, new ones get a new spawner', async (t) => {
  const svc = await startTaskService(t);
  const orphan = await submitOk(t, svc, { task: 'sleep', seconds: 60, steps: 60 });
  const running = await waitState(svc, orphan.task_id, 'running');
  const spawner = (await readProcess(running.pid!))!.ppid;
  t.match(readFileSync(`/proc/${spawner}/cmdline`, 'latin1'), /spawner\.js/, 'runners are children of the spawner');
  process.kill(spawner, 'SIGKILL');
  await waitFor(async () => !(await isRunning(spawner)), 5000, 'the spawner to die');
  t.ok(await isRunning(running.pid!), 'the runner outlives its spawner');
  const next = await submitOk(t, svc, { task: 'demo', x: 1, y: 2 });
  const nextStatus = (await waitTask(svc, next)).status;
  t.equal(nextStatus.state, 'succeeded', `a new spawner starts the next Task ${nextStatus.error}`);
  t.equal((await svc.call('cancel', { task_id: orphan.task_id })).body.answer, true, 'the orphaned run is still cancellable');
  const status = await statusOf(svc, orphan.task_id);
  t.same([status.state, status.exit_code], ['cancelled', 130]);
});
