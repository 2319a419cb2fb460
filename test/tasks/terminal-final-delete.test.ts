import t from 'tap';
import { runToEnd, startTaskService } from './task-helpers.js';

t.test('terminal is final: 60 cycles of submit → wait_task → delete_tasks, none skipped', async (t) => {
  const svc = await startTaskService(t);
  let skipped = 0;
  for (let i = 0; i < 60; i++) {
    const handle = await runToEnd(t, svc, { task: 'demo', x: i, y: 1 });
    const deleted = (await svc.call('delete_tasks', { task_ids: [handle.task_id] })).body.answer as string[];
    if (deleted[0] !== handle.task_id) skipped++;
  }
  t.equal(skipped, 0, 'every Task shown terminal was deleted at once');
  t.same((await svc.call('list_task_ids')).body.answer, [], 'nothing is left');
});
