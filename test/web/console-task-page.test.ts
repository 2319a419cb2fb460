import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { screenshot, startConsole } from '../helpers/browser.js';

// The Task page, one test per card or action. The tests share this file's process and browser
// (one chromium start instead of six); each still gets a service and a browser context of its own,
// as when each had a file to itself.

const taskPage = (url: string, id: string) => `${url}/#/tasks/${encodeURIComponent(id)}`;

/** First attempt prints and exits 3 (a listed exit code); the retry succeeds. */
const ONCE_THEN_OK = ['sh', '-c', 'if [ -e attempted ]; then echo "second attempt"; else touch attempted; echo "first attempt failed"; exit 3; fi'];

/** The page's selection API (these functions run in the page; tests compile without DOM types). */
type Rect = { top: number; bottom: number };
type Selecting = { getSelection(): { toString(): string; getRangeAt(i: number): { getBoundingClientRect(): Rect } } };

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

t.test('a Task page lists each metric with its latest value, step and point count, refreshed while the Task runs', async (t) => {
  const { svc, page, errors } = await startConsole(t);
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

t.test('"Run again" opens the submit form with the Task\'s inputs; the new Task lists the old one in source_tasks', async (t) => {
  const { svc, page, errors } = await startConsole(t);
  const first = (await svc.call('submit', { task: 'demo', x: 2, y: 3, task_name: 'first' })).body;
  t.equal(first.success, true);
  if (!first.success) return;
  await svc.call('wait_task', { task_id: first.answer.task_id, run_id: first.answer.run_id });

  await page.goto(`${svc.url}/#/tasks/${encodeURIComponent('base#demo#first')}`);
  await page.click('.page-head a:text("Run again…")');
  const form = page.locator('form[aria-label="Inputs of demo"]');
  await form.waitFor();
  t.equal(await form.locator('[name="x"]').inputValue(), '2', 'x is prefilled');
  t.equal(await form.locator('[name="y"]').inputValue(), '3', 'y is prefilled');
  t.equal(await form.locator('[name="source_tasks"]').inputValue(), 'base#demo#first', 'the old Task is a source');
  t.equal(await form.locator('[name="task_name"]').inputValue(), '', 'a new name is generated');
  await page.waitForSelector('.rerun-of :text("base#demo#first")');
  const commandCard = page.locator('.def-card[href$="/command"]');
  t.equal(await commandCard.locator('.def-summary code:text-is("cwd")').count(), 1, "a card's description is rendered Markdown: `cwd` is code");
  t.notMatch(await commandCard.textContent(), /`/, 'no raw backticks');
  t.equal(await commandCard.locator('.badge').count(), 0, 'no type badge that repeats the name');
  await screenshot(page, 'task-rerun');

  await form.locator('[name="x"]').fill('5');
  await form.locator('button[type="submit"]').click();
  await page.waitForURL((url) => url.hash.startsWith('#/tasks/base%23demo%23') && !url.hash.includes('first'));
  const newId = decodeURIComponent(new URL(page.url()).hash.slice('#/tasks/'.length));
  const status = (await svc.call('status', { task_id: newId })).body.answer;
  t.match(status.config, { x: 5, y: 3, source_tasks: 'base#demo#first' }, 'the change and the lineage reach the new Task');
  await page.waitForSelector('.page-head [data-state="succeeded"]');
  t.same(errors, []);
});

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

t.test('a result cache hit shows a badge linking the Task its result came from', async (t) => {
  const { svc, page, errors } = await startConsole(t, { config: { tasks: { demo: { cache: true } } } });
  const first = await svc.call('submit', { task: 'demo', x: 20, y: 1, task_name: 'cached-source' });
  t.equal((await svc.call('wait_task', { task_id: first.body.answer.task_id, run_id: first.body.answer.run_id })).body.answer.state, 'succeeded');
  const hit = await svc.call('submit', { task: 'demo', x: 20, y: 1, task_name: 'cached-hit' });
  t.equal(hit.body.success, true);

  await page.goto(`${svc.url}/#/tasks/${encodeURIComponent(hit.body.answer.task_id)}`);
  const badge = page.locator('.page-head a.cache-hit');
  await badge.waitFor();
  t.match(await badge.textContent(), /cache hit · cached-source/);
  await badge.click();
  await page.waitForURL(/#\/tasks\/base%23demo%23cached-source$/);
  await page.waitForSelector('.page-head [data-state="succeeded"]');
  t.equal(await page.locator('.page-head .cache-hit').count(), 0, 'the source ran: no badge');
  t.same(errors, []);
});

t.test('a long lineage chain is scaled to fit its card', async (t) => {
  const { svc, page, errors } = await startConsole(t);
  // A chain of nine: laid out left to right, far wider than a card.
  let previous = '';
  for (let i = 0; i < 8; i++) {
    const res = (await svc.call('submit', { task: 'demo', x: i, y: 1, task_name: `step-${i}`, source_tasks: previous })).body;
    if (res.success) previous = res.answer.task_id;
  }
  const child = (await svc.call('submit', { task: 'demo', x: 1, y: 1, task_name: 'child', source_tasks: previous })).body;
  t.equal(child.success, true);
  if (!child.success) return;
  await svc.call('wait_task', { task_id: child.answer.task_id, run_id: child.answer.run_id });
  await page.goto(`${svc.url}/#/tasks/${encodeURIComponent(child.answer.task_id)}`);
  const graph = page.locator('section[aria-label="Lineage"] svg.lineage');
  await graph.locator('[data-task-id]').nth(8).waitFor();
  const drawn = await graph.evaluate((svg) => {
    const box = svg.getBoundingClientRect();
    const card = svg.closest('section')!.getBoundingClientRect();
    return { svg: box.width, card: card.width, natural: Number(svg.getAttribute('width')) };
  });
  t.ok(drawn.natural > drawn.card, `the graph is wider than its card by nature (${drawn.natural} px > ${drawn.card} px)`);
  t.ok(drawn.svg <= drawn.card, `and drawn within it (${drawn.svg} px)`);
  t.same(errors, []);
});
