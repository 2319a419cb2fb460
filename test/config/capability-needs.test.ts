import t from 'tap';
import { metricsCapability } from '../../app/metrics-capability.js';
import { pluginsCapability } from '../../app/plugins-capability.js';
import { snapshotsCapability } from '../../app/snapshots-capability.js';
import { tasksCapability } from '../../app/tasks-capability.js';
import { machineCapability } from '../../app/machine-capability.js';
import { startTestService } from '../helpers/service.js';
import { waitTask, type Handle } from '../tasks/task-helpers.js';
import type { JobCatalog } from '../../schemas/job-response.js';

t.test('capabilities listed before the tasks capability they need are built after it and work', async (t) => {
  const svc = await startTestService(t, { capabilities: [snapshotsCapability, metricsCapability, pluginsCapability, machineCapability, tasksCapability] });
  t.match((await svc.call('list_plugins')).body, { success: true, answer: [] }, 'the plugin Jobs reach the Tasks');
  const deleted = await svc.call('sync_tasks', { deletions: ['base#demo#gone'] });
  t.match(deleted.body, { success: true, answer: { applied: [], deleted: [] } }, 'sync_tasks reaches the Tasks');
  const handle = (await svc.call('submit', { task: 'demo', x: 2, y: 3 })).body.answer as Handle;
  t.equal((await waitTask(svc, handle)).status.state, 'succeeded');
  const metrics = await (await svc.fetch('/metrics')).text();
  t.match(metrics, /^taskyard_tasks\{state="succeeded"\} 1$/m, 'the Task gauges follow the Tasks');
  t.match((await svc.call('machine_status')).body, { success: true, answer: { gpu_leases: [] } }, 'machine_status is built with the Tasks');
  // The catalog keeps the listed order, not the build order.
  const jobs = ((await (await svc.fetch('/jobs')).json()) as { answer: JobCatalog }).answer.items.map((j) => j.name);
  t.ok(jobs.indexOf('sync_tasks') < jobs.indexOf('list_plugins') && jobs.indexOf('list_plugins') < jobs.indexOf('version') && jobs.indexOf('version') < jobs.indexOf('submit'), `catalog in listed order: ${jobs.join(' ')}`);
});

t.test('a capability whose needed service no capability provides is a clear error at start', async (t) => {
  await t.rejects(startTestService(t, { capabilities: [machineCapability, pluginsCapability] }), {
    message: "capability plugins needs the service 'tasks', which no listed capability provides (list the capability that provides it)",
  });
});

t.test('machine_status without a tasks capability answers no GPU leases', async (t) => {
  const svc = await startTestService(t, { capabilities: [machineCapability] });
  t.match((await svc.call('machine_status')).body, { success: true, answer: { gpu_leases: [] } });
});
