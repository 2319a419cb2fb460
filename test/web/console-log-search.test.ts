import t from 'tap';
import { startConsole } from '../helpers/browser.js';

/** The page's selection API (these functions run in the page; tests compile without DOM types). */
type Rect = { top: number; bottom: number };
type Selecting = { getSelection(): { toString(): string; getRangeAt(i: number): { getBoundingClientRect(): Rect } } };

t.test('a Task log opens at its tail, and the search finds a line and says how many match', async (t) => {
  const { svc, page, errors } = await startConsole(t);
  const script = 'for i in $(seq 1 400); do if [ $i = 150 ]; then echo "line $i needle"; else echo "line $i"; fi; done';
  const res = (await svc.call('submit', { task: 'command', argv: ['sh', '-c', script], task_name: 'long-log' })).body;
  t.equal(res.success, true);
  if (!res.success) return;
  await svc.call('wait_task', { task_id: res.answer.task_id, run_id: res.answer.run_id });
  await page.goto(`${svc.url}/#/tasks/${encodeURIComponent(res.answer.task_id)}`);
  const log = page.locator('pre.log');
  await page.waitForSelector('pre.log:has-text("line 400")');
  const atTail = await log.evaluate((pre) => pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4);
  t.ok(atTail, 'the log opens scrolled to its last line');

  await page.fill('input.log-search', 'NEEDLE');
  await page.waitForSelector('.log-found:text("1 match")');
  t.equal(await page.evaluate(() => (globalThis as unknown as Selecting).getSelection().toString()), 'needle', 'the match is selected (case does not matter)');
  const visible = await log.evaluate((pre) => {
    const range = (globalThis as unknown as Selecting).getSelection().getRangeAt(0).getBoundingClientRect();
    const box = pre.getBoundingClientRect();
    return range.top >= box.top && range.bottom <= box.bottom;
  });
  t.ok(visible, 'and scrolled into view');
  t.equal(await page.isChecked('#follow-log'), false, 'following stops, so the match stays in view');
  await page.fill('input.log-search', 'line 3');
  await page.press('input.log-search', 'Enter');
  await page.waitForSelector('.log-found:text("111 matches")');
  await page.fill('input.log-search', 'absent');
  await page.waitForSelector('.log-found:text("no match")');
  t.same(errors, []);
});
