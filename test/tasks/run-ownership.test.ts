import t from 'tap';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { makeWorkspace, runToEnd, startTaskService, statusOf, submitOk, waitState, waitTask, writeFixturePlugin, type Handle } from './task-helpers.js';


t.test('every Task has events.jsonl from submit on, and the demo records its steps', async (t) => {
  const svc = await startTaskService(t, { config: { service: { max_running_tasks: 1 } } });
  const blocker = await submitOk(t, svc, { task: 'sleep', seconds: 30 });
  await waitState(svc, blocker.task_id, 'running');
  const queued = await submitOk(t, svc, { task: 'demo', x: 2, y: 3 });
  const dir = join(svc.workspace, 'base', queued.task_id);
  t.equal((await statusOf(svc, queued.task_id)).state, 'queued');
  t.equal((await stat(join(dir, 'events.jsonl'))).size, 0, 'a queued Task has an empty progress record');
  t.equal((await svc.call('cancel', { task_id: blocker.task_id })).body.answer, true);

  const done = await waitTask(svc, queued);
  t.same(done.status['result'], { result: 5, branch: 'different', operands: ['x', 'y'], artifacts: {} }, 'outputs stay as the spec says');
  const steps = done.status['steps'] as Array<{ name: string; finished_at: string | null; percentage: number | null }>;
  t.same(steps.map((s) => s.name), ['initialize', 'add_x', 'add_y', 'finish']);
  t.ok(steps.every((s) => s.finished_at && s.percentage === 100), 'each step finished at 100 %');
  const lines = (await readFile(join(dir, 'events.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { name: string });
  t.same([...new Set(lines.map((l) => l.name))], ['initialize', 'add_x', 'add_y', 'finish'], 'events.jsonl records the same steps');

  const equal = await runToEnd(t, svc, { task: 'demo', x: 4, y: 4 });
  const streamed = await svc.events('stream_task', { task_id: equal.task_id });
  const names = streamed.events.filter((e) => e['kind'] === 'progress').map((e) => e['name']);
  t.same([...new Set(names)], ['initialize', 'add_equal_operands', 'finish'], 'stream_task shows the steps of an equal-operand demo');
  t.same(streamed.result!.answer.result, { result: 8, branch: 'equal', operands: ['x', 'y'], artifacts: {} });
});

t.test('queued Tasks cost nothing while nothing changes: no timer or watch per queued Task', async (t) => {
  const svc = await startTaskService(t, { config: { service: { max_running_tasks: 1 } } });
  const blocker = await submitOk(t, svc, { task: 'sleep', seconds: 60 });
  await waitState(svc, blocker.task_id, 'running');
  // Watches and timers that keep the loop busy (an unref'd timer is not listed; its watch is).
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout' || r === 'FSEventWrap').length;
  const before = timers();
  const queued: Handle[] = [];
  for (let i = 0; i < 100; i++) queued.push((await svc.call('submit', { task: 'demo', x: i, y: 0 })).body.answer);
  t.ok(timers() - before < 10, `100 queued Tasks added ${timers() - before} timers and watches`);
  t.equal((await statusOf(svc, queued[99]!.task_id)).state, 'queued');
  // Cancel all but the first two, then let those run: the queue moves on once the slot is free.
  for (const handle of queued.slice(2)) t.equal((await svc.call('cancel', { task_id: handle.task_id })).body.answer, true);
  t.equal((await svc.call('cancel', { task_id: blocker.task_id })).body.answer, true);
  t.same([(await waitTask(svc, queued[0]!)).status.state, (await waitTask(svc, queued[1]!)).status.state], ['succeeded', 'succeeded'], 'the queue drains in order once the slot is free');
});

t.test('a Task with 2,000 steps: the status keeps the first 100 and the latest 900, the last change always lands', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace);
  const svc = await startTaskService(t, { workspace });
  const handle = await submitOk(t, svc, { task: 'many-steps', steps: 2000 });
  const done = await waitTask(svc, handle);
  t.equal(done.status.state, 'succeeded');
  const steps = done.status['steps'] as Array<{ name: string; finished_at: string | null }>;
  t.same([steps.length, steps[99]!.name, steps[100]!.name, steps.at(-1)!.name], [1000, 'step-99', 'step-1100', 'step-1999'], 'the last state is never lost');
  t.ok(steps.every((s) => s.finished_at), 'every step finished');
  const lines = (await readFile(join(workspace, 'fixture', handle.task_id, 'events.jsonl'), 'utf8')).trim().split('\n');
  t.match(JSON.parse(lines.at(-1)!), { name: 'step-1999', finished_at: /./ }, 'the last step ended in events.jsonl');
});
