import t from 'tap';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { runToEnd, startTaskService, statusOf, waitTask, type Handle } from './task-helpers.js';

t.test('terminal is final: 60 cycles of submit → wait_task → fixed-name resubmit, none refused', async (t) => {
  const svc = await startTaskService(t);
  const refusals: string[] = [];
  let handle = await runToEnd(t, svc, { task: 'demo', x: 0, y: 1, task_name: 'again' });
  for (let i = 1; i < 60; i++) {
    const next = await svc.call('submit', { task: 'demo', x: i, y: 1, task_name: 'again' });
    if (!next.body.success) {
      refusals.push(String(next.body.answer));
      continue;
    }
    handle = next.body.answer as Handle;
    const done = await waitTask(svc, handle);
    t.equal(done.status.state, 'succeeded');
  }
  t.same(refusals, [], 'a fixed name is free the moment its Task was shown terminal');
  const last = await statusOf(svc, handle.task_id);
  t.equal(last.run_id, handle.run_id, 'the record holds the last run');
  t.same(await readdir(join(svc.workspace, 'base')), ['base#demo#again'], 'no hidden or replaced directory is left');
});

