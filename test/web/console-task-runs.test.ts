import t from 'tap';
import { screenshot, startConsole } from '../helpers/browser.js';

/** First attempt prints and exits 3 (a listed exit code); the retry succeeds. */
const ONCE_THEN_OK = ['sh', '-c', 'if [ -e attempted ]; then echo "second attempt"; else touch attempted; echo "first attempt failed"; exit 3; fi'];

t.test('a retried Task lists its runs, each with its outcome, why it was retried and its log', async (t) => {
  const { svc, page, errors } = await startConsole(t, { config: { tasks: { command: { retries: { max: 2, exit_codes: [3] } } } } });
  const handle = (await svc.call('submit', { task: 'command', argv: ONCE_THEN_OK, task_name: 'flaky' })).body;
  t.equal(handle.success, true);
  if (!handle.success) return;
  const { task_id: id, run_id: first } = handle.answer;
  const final = (await svc.call('wait_task', { task_id: id, run_id: first })).body.answer;
  t.equal(final.state, 'succeeded');

  await page.goto(`${svc.url}/#/tasks/${encodeURIComponent(id)}`);
  const rows = page.locator('section[aria-label="Runs"] tbody tr');
  await rows.nth(1).waitFor();
  t.same(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run-id'))), [first, final.run_id], 'both runs, oldest first');
  t.same(await rows.nth(0).locator('td').allTextContents().then((cells) => [cells[0], cells[1], cells[3], cells[4]]), ['1', 'failed', '3', 'its exit code is listed']);
  t.same(await rows.nth(1).locator('td').allTextContents().then((cells) => [cells[0], cells[1], cells[4]]), ['2', 'succeeded', '—']);
  await screenshot(page, 'task-runs');

  await rows.nth(0).locator('a:text("log")').click();
  await page.waitForSelector(':text("first attempt failed")');
  t.pass("the first attempt's log opens in the workspace preview");

  await page.goto(`${svc.url}/#/tasks`);
  const row = page.locator(`a.vt-row[href$="${encodeURIComponent(id)}"]`);
  await row.waitFor();
  t.equal(await row.locator('.progress').count(), 0, 'the Tasks table draws no progress bar for a Task that recorded no steps');

  const once = (await svc.call('submit', { task: 'demo', x: 1, y: 2, task_name: 'once' })).body;
  if (once.success) await svc.call('wait_task', { task_id: once.answer.task_id, run_id: once.answer.run_id });
  await page.goto(`${svc.url}/#/tasks/${encodeURIComponent('base#demo#once')}`);
  await page.waitForSelector('section[aria-label="Runs"] :text("One run: nothing was retried.")');
  t.same(errors, []);
});
