import t from 'tap';
import { validateConfig } from '../../supervisor/common/config.js';
import { localCapacity } from '../../supervisor/tasks/runs/capacity.js';
import { Tasks } from '../../supervisor/tasks/tasks.js';
import type { TaskStatus } from '../../schemas/tasks.js';
import { killTaskProcesses, makeWorkspace } from './task-helpers.js';

t.test('a hit is announced as task:ended, as a run that ends is (what webhooks listen to)', async (t) => {
  const workspace = await makeWorkspace(t);
  const config = validateConfig({ service: { workspace, runner_pool_size: 0, gpus: 0 }, tasks: { demo: { cache: true } } }, 'test');
  const tasks = new Tasks(workspace, config, await localCapacity(config));
  await tasks.start();
  await tasks.ready;
  t.teardown(async () => {
    await tasks.close();
    await killTaskProcesses(workspace);
  });
  const ended: Array<[string, TaskStatus]> = [];
  tasks.events.on('task:ended', ({ id, status }) => ended.push([id, status]));

  const first = await tasks.submit('demo', { x: 1, y: 2 }, undefined);
  await tasks.wait(first.task_id, first.run_id, 1000, new AbortController().signal);
  const hit = await tasks.submit('demo', { x: 1, y: 2 }, undefined);
  t.same(ended.map(([id, s]) => [id, s.run_id, s.state]), [
    [first.task_id, first.run_id, 'succeeded'],
    [hit.task_id, hit.run_id, 'succeeded'],
  ], 'announced once each, the hit by the time its submit answered');
  t.equal(ended[1]![1].pid, null, 'the hit had no process');
  t.equal(ended[1]![1].result['result'], 3);
});
