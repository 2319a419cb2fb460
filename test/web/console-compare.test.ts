import t from 'tap';
import { screenshot, startConsole } from '../helpers/browser.js';

/** A short "training": its loss falls at the rate LR gives it. */
const TRAIN = ['import os, taskyard_task as tt', 'lr = float(os.environ["LR"])', 'for step in range(20):', '    tt.metric("loss", 1 / (1 + lr * step), step=step)', 'tt.output({"final_lr": lr})'].join('\n');

t.test('three runs selected in the Tasks table compare side by side: differences marked, final metrics, curves overlaid', async (t) => {
  const { svc, page, errors } = await startConsole(t);
  const ids: string[] = [];
  for (const [name, lr] of [['lr-a', '0.1'], ['lr-b', '0.5'], ['lr-c', '2']] as const) {
    const res = (await svc.call('submit', { task: 'command', argv: ['python3', '-c', TRAIN], env: { LR: lr }, task_name: name })).body;
    if (!res.success) {
      t.fail(JSON.stringify(res));
      return;
    }
    ids.push(res.answer.task_id);
    await svc.call('wait_task', { task_id: res.answer.task_id, run_id: res.answer.run_id });
  }
  await page.goto(`${svc.url}/#/tasks`);
  for (const id of ids) await page.click(`input.row-select[aria-label="Select ${id} to compare"]`);
  t.equal(page.url().includes('/tasks/'), false, 'ticking a box does not open the Task');
  await page.click('.page-head a.button:text("Compare 3")');
  await page.waitForSelector('section[aria-label="Metric curves"] figure.overlay canvas');

  const row = (section: string, field: string) => page.locator(`section[aria-label="${section}"] tr[data-field="${field}"]`);
  t.equal(await row('Inputs', 'env').getAttribute('class'), 'differs', 'the inputs that differ are marked');
  t.equal(await row('Inputs', 'argv').getAttribute('class'), null, 'the same script is not');
  t.same(await row('Outputs', 'final_lr').locator('td').allTextContents(), ['0.1', '0.5', '2']);
  t.same(await row('Final metrics', 'loss').locator('td').allTextContents(), ['0.344828', '0.0952381', '0.025641'], 'the final loss of each run');
  t.equal(await page.getAttribute('figure.overlay[data-metric="loss"]', 'data-series'), '3', 'one curve per run in one chart');
  t.same(await page.locator('figure.overlay .u-legend .u-label').allTextContents().then((l) => l.slice(1)), ['lr-a', 'lr-b', 'lr-c'], 'a legend names the runs');
  await screenshot(page, 'compare', { fullPage: true });
  t.same(errors, []);
});
