import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { screenshot, startConsole } from '../helpers/browser.js';
import { startTestService } from '../helpers/service.js';

/**
 * A training-like Python Task: three epochs of metrics, then it waits (bounded) for a `go` file in
 * its directory, so the page is seen following it while it runs, then seven epochs more.
 */
const TRAIN = [
  'import os, time, taskyard_task as tt',
  'def epochs(first, last):',
  '    for epoch in range(first, last):',
  '        tt.metric("loss", 1 / (epoch + 1), step=epoch)',
  '        tt.metric("accuracy", epoch / 10, step=epoch)',
  'epochs(0, 3)',
  'tt.metric("lr", 0.001)',
  'deadline = time.time() + 60',
  'while not os.path.exists("go") and time.time() < deadline:',
  '    time.sleep(0.05)',
  'epochs(3, 10)',
].join('\n');

const shared = await startTestService(t);
const taskPage = (url: string, id: string) => `${url}/#/tasks/${encodeURIComponent(id)}`;

t.test('a Task page lists each metric with its latest value, step and point count, refreshed while the Task runs', async (t) => {
  const { svc, page, errors } = await startConsole(t, { service: shared });
  const handle = (await svc.call('submit', { task: 'command', argv: ['python3', '-c', TRAIN], task_name: 'train' })).body;
  t.equal(handle.success, true, 'the command Task is submitted');
  if (!handle.success) return;
  const id = handle.answer.task_id;
  await page.goto(taskPage(svc.url, id));
  const row = (name: string) => `section[aria-label="Metrics"] tr[data-metric="${name}"]`;

  // While it waits for `go`: the first three epochs, read as the page follows the Task.
  await page.waitForSelector(`${row('loss')} .metric-count:text-is("3")`);
  t.equal((await svc.call('status', { task_id: id })).body.answer.state, 'running', 'seen while the Task runs');
  // It reports no steps (no progress events): the page still sees it start.
  await page.waitForSelector('.page-head [data-state="running"]');
  t.equal(await page.textContent(`${row('loss')} .metric-step`), '2');
  t.equal(await page.textContent(`${row('loss')} .metric-latest`), '0.333333', 'the latest loss, 6 significant digits');
  t.equal(await page.textContent(`${row('lr')} .metric-step`), '—', 'a metric without steps');
  t.equal(await page.textContent(`${row('lr')} .metric-latest`), '0.001');
  const chart = (name: string) => `section[aria-label="Metrics"] figure.metric-chart[data-metric="${name}"]`;
  await page.waitForSelector(`${chart('loss')}[data-points="3"] canvas`);
  t.pass('a chart of the loss, drawn while the Task runs');

  await writeFile(join(svc.workspace, 'command', id, 'go'), '');
  await page.waitForSelector('.page-head [data-state="succeeded"]');
  await page.waitForSelector(`${row('loss')} .metric-count:text-is("10")`);
  t.equal(await page.textContent(`${row('loss')} .metric-step`), '9', 'the last epoch');
  t.equal(await page.textContent(`${row('loss')} .metric-latest`), '0.1');
  t.equal(await page.textContent(`${row('accuracy')} .metric-latest`), '0.9');
  t.same(await page.locator('section[aria-label="Metrics"] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-metric'))), ['accuracy', 'loss', 'lr'], 'one row per metric, by name');
  await page.waitForSelector(`${chart('loss')}[data-points="10"] canvas`);
  t.pass('the chart followed the Task to its last point without a reload');
  t.same(await page.locator('figure.metric-chart').evaluateAll((figs) => figs.map((f) => f.getAttribute('data-metric'))), ['accuracy', 'loss', 'lr'], 'one chart per metric');
  t.ok(await page.locator(`${chart('loss')} canvas`).evaluate((c) => (c as unknown as { width: number }).width > 100), 'the chart has room to draw');
  await screenshot(page, 'task-metrics');

  // A Task that reports none says so.
  const demo = (await svc.call('submit', { task: 'demo', x: 1, y: 2, task_name: 'plain' })).body;
  if (demo.success) await svc.call('wait_task', { task_id: demo.answer.task_id, run_id: demo.answer.run_id });
  await page.goto(taskPage(svc.url, 'base#demo#plain'));
  await page.waitForSelector('section[aria-label="Metrics"] :text("This Task reported no metrics.")');
  t.equal(await page.locator('figure.metric-chart').count(), 0, 'and draws no chart');
  t.same(errors, []);
});
