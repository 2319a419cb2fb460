import { execFileSync } from 'node:child_process';
import { appendFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { TaskColumnValues } from '../../schemas/task-columns.js';
import { connectMcp } from '../helpers/mcp-client.js';
import type { TestService } from '../helpers/service.js';
import { startTaskService, submitOk, waitTask, type Handle } from './task-helpers.js';

/** A Python command Task that reports two metrics, the last loss 0.2. */
const TRAIN = ['import taskyard_task as tt', 'for epoch in range(5):', '    tt.metric("loss", 1 / (epoch + 1), step=epoch)', '    tt.metric("accuracy", epoch / 10)'].join('\n');

async function columns(svc: TestService, taskIds: string[], cols: Array<{ kind: string; name: string }>): Promise<TaskColumnValues> {
  const res = await svc.call('read_task_columns', { task_ids: taskIds, columns: cols });
  if (!res.body.success) throw new Error(`read_task_columns failed: ${JSON.stringify(res.body.answer)}`);
  return res.body.answer as TaskColumnValues;
}

async function ended(t: Test, svc: TestService, args: Record<string, unknown>): Promise<Handle> {
  const handle = await submitOk(t, svc, args);
  await waitTask(svc, handle);
  return handle;
}

t.test('read_task_columns answers chosen inputs, outputs and final metric values of many Tasks in one call', async (t) => {
  const svc = await startTaskService(t);
  const a = await ended(t, svc, { task: 'demo', x: 2, y: 3 });
  const b = await ended(t, svc, { task: 'demo', x: 10, y: -1, task_name: `long-${'n'.repeat(20)}` });
  const trained = await ended(t, svc, { task: 'command', argv: ['python3', '-c', TRAIN] });
  const cols = [
    { kind: 'input', name: 'x' },
    { kind: 'output', name: 'result' },
    { kind: 'output', name: 'operands' },
    { kind: 'metric', name: 'loss' },
    { kind: 'metric', name: 'accuracy' },
    { kind: 'input', name: '__proto__' },
  ];
  const answer = await columns(svc, [a.task_id, b.task_id, trained.task_id, 'demo#demo#gone'], cols);
  t.same(answer.unknown, ['demo#demo#gone'], 'an ID without a Task is listed, not a failure');
  t.same(answer.values[a.task_id], { 'input:x': 2, 'output:result': 5, 'output:operands': '["x","y"]' }, 'inputs and outputs; an array as its JSON text');
  t.same(answer.values[b.task_id], { 'input:x': 10, 'output:result': 9, 'output:operands': '["x","y"]' });
  t.same(answer.values[trained.task_id], { 'metric:loss': 0.2, 'metric:accuracy': 0.4 }, 'final metric values: the last point of each series');

  // The end of the metrics file is what is searched: a series last reported before the last 256 KiB has no final value.
  const file = join(svc.workspace, 'command', trained.task_id, 'metrics.jsonl');
  const line = (i: number) => `${JSON.stringify({ name: 'noise', value: i, timestamp: new Date().toISOString() })}\n`;
  const point = (name: string, value: number) => `${JSON.stringify({ name, value, timestamp: new Date().toISOString() })}\n`;
  await appendFile(file, point('accuracy', 0.9) + Array.from({ length: 1200 }, (_, i) => line(i)).join(''));
  const deeper = await columns(svc, [trained.task_id], [{ kind: 'metric', name: 'accuracy' }, { kind: 'metric', name: 'noise' }]);
  t.same(deeper.values[trained.task_id], { 'metric:accuracy': 0.9, 'metric:noise': 1199 }, 'a last point ~100 KB before the end is found (several windows back, lines cut by a window joined)');
  await appendFile(file, Array.from({ length: 4000 }, (_, i) => line(i)).join('') + '{"name":"loss","val');
  const tail = await columns(svc, [trained.task_id], [{ kind: 'metric', name: 'loss' }, { kind: 'metric', name: 'noise' }]);
  t.same(tail.values[trained.task_id], { 'metric:noise': 3999 }, 'a torn last line is passed over; loss lies before the searched tail');

  // A metrics file that is a FIFO is not opened (no hang): the Task shows no metric values.
  await rm(file);
  execFileSync('mkfifo', [file]);
  t.teardown(() => rm(file, { force: true }));
  const fifo = await columns(svc, [trained.task_id, a.task_id], [{ kind: 'metric', name: 'loss' }, { kind: 'input', name: 'y' }]);
  t.same(fifo.values, { [trained.task_id]: {}, [a.task_id]: { 'input:y': 3 } });

  const text = await columns(svc, [b.task_id], [{ kind: 'input', name: 'task_name' }]);
  t.equal(text.values[b.task_id]?.['input:task_name'], `long-${'n'.repeat(20)}`);

  const bad = await svc.call('read_task_columns', { task_ids: [a.task_id], columns: [{ kind: 'file', name: 'x' }] });
  t.equal(bad.status, 422, 'an unknown column kind is refused by validation');
  const none = await svc.call('read_task_columns', { task_ids: [], columns: cols });
  t.equal(none.status, 422, 'no IDs is refused by validation');

  const mcp = await connectMcp(t, svc.url, svc.token);
  const viaMcp = await mcp.callTool({ name: 'read_task_columns', arguments: { task_ids: [a.task_id], columns: [{ kind: 'output', name: 'result' }] } });
  t.equal(viaMcp.isError, false);
  t.same((viaMcp.structuredContent as { answer: TaskColumnValues }).answer, { values: { [a.task_id]: { 'output:result': 5 } }, unknown: [] }, 'MCP answers the same');
});
