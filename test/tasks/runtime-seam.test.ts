import t from 'tap';
import { declareCapability } from '../../app/capability-contract.js';
import { tasksCapability } from '../../app/tasks-capability.js';
import type { Tasks } from '../../supervisor/tasks/tasks.js';
import { waitFor } from '../helpers/service.js';
import { startTaskService, submitOk, waitTask, writeFixturePlugin } from './task-helpers.js';

t.test('the runtime seam: reloadDefinitions, isRegistrationActive and the typed event feed', async (t) => {
  let runtime: Tasks | undefined;
  const probe = declareCapability({
    name: 'probe',
    needs: ['tasks'],
    build: (_env, { tasks }) => {
      runtime = tasks;
      return { jobs: [] };
    },
  });
  const svc = await startTaskService(t, { capabilities: [tasksCapability, probe] });
  const rt = runtime!;
  // One front door: what the facade is made of is not reachable from the capabilities that hold it.
  for (const part of ['index', 'runs', 'catalog', 'spareDirs', 'submitters']) t.notOk(part in rt, `Tasks exposes no ${part}`);
  t.same((await svc.call('list_installed_task_definitions')).body.answer.map((d) => d.name), ['command', 'demo', 'sleep']);

  await writeFixturePlugin(svc.workspace);
  await rt.reloadDefinitions();
  const names = (await svc.call('list_installed_task_definitions')).body.answer.map((d) => d.name);
  t.ok(names.includes('echo-log'), 'a plugin installed after start is described on reload');

  const seen: string[] = [];
  let logEvents = 0;
  const stopStatus = rt.events.on('task:status', ({ status }) => status && seen.push(status.state));
  const stopLog = rt.events.on('task:log', () => logEvents++);
  t.teardown(() => {
    stopStatus();
    stopLog();
  });
  const handle = await submitOk(t, svc, { task: 'echo-log', text: 'line\n', repeat: 5, pause: 0.1 });
  await waitFor(() => rt.isRegistrationActive('echo-log'), 5000, 'echo-log to be active');
  t.equal(rt.isRegistrationActive('demo'), false);
  t.equal((await waitTask(svc, handle)).status.state, 'succeeded');
  await waitFor(() => !rt.isRegistrationActive('echo-log'), 5000, 'echo-log to settle');
  t.equal(seen[0], 'queued');
  t.ok(seen.includes('running'), 'running was published');
  t.equal(seen.at(-1), 'succeeded');
  t.ok(logEvents >= 1, 'log growth was published');
});
