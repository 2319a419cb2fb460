import t from 'tap';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { runToEnd, startTaskService, statusOf, waitTask } from './task-helpers.js';

/**
 * Terminal is final: the moment wait_task shows a run terminal, its ID is free (deletable, and a
 * fixed name resubmittable). Each cycle is a chance for the race between the two to show; every
 * run is a runner process, so the cycles are as many as catch it, not more.
 */
const CYCLES = 25;

t.test('terminal is final', async (t) => {
  // The two cycles use distinct names on one service: neither depends on a fresh one.
  const svc = await startTaskService(t);

  t.test(`${CYCLES} cycles of submit → wait_task → delete_tasks, none skipped`, async (t) => {
    let skipped = 0;
    for (let i = 0; i < CYCLES; i++) {
      const handle = await runToEnd(t, svc, { task: 'demo', x: i, y: 1 });
      const deleted = (await svc.call('delete_tasks', { task_ids: [handle.task_id] })).body.answer;
      if (deleted[0] !== handle.task_id) skipped++;
    }
    t.equal(skipped, 0, 'every Task shown terminal was deleted at once');
    t.same((await svc.call('list_task_ids')).body.answer, [], 'nothing is left');
  });

  t.test(`${CYCLES} cycles of submit → wait_task → fixed-name resubmit, none refused`, async (t) => {
    const refusals: string[] = [];
    let handle = await runToEnd(t, svc, { task: 'demo', x: 0, y: 1, task_name: 'again' });
    for (let i = 1; i < CYCLES; i++) {
      const next = await svc.call('submit', { task: 'demo', x: i, y: 1, task_name: 'again' });
      if (!next.body.success) {
        refusals.push(String(next.body.answer));
        continue;
      }
      handle = next.body.answer;
      const done = await waitTask(svc, handle);
      t.equal(done.status.state, 'succeeded');
    }
    t.same(refusals, [], 'a fixed name is free the moment its Task was shown terminal');
    const last = await statusOf(svc, handle.task_id);
    t.equal(last.run_id, handle.run_id, 'the record holds the last run');
    t.same(await readdir(join(svc.workspace, 'base')), ['base#demo#again'], 'no hidden or replaced directory is left');
  });
});
