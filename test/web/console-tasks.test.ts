import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { screenshot, startConsole, waitFor } from '../helpers/browser.js';
import { memoryDir } from '../helpers/memory-dir.js';
import { startTestService } from '../helpers/service.js';

const COUNT = 3000;

/**
 * Writes finished Task records straight into a workspace, as a long-lived service would have them
 * (synchronously: 6,000 awaited calls cost more than the writes themselves).
 */
function seedTasks(workspace: string): void {
  const base = Date.parse('2026-01-01T00:00:00Z');
  for (let i = 0; i < COUNT; i++) {
    const name = `t-${String(i).padStart(4, '0')}`;
    const id = `base#demo#${name}`;
    const dir = join(workspace, 'base', id);
    mkdirSync(dir, { recursive: true });
    const created = new Date(base + i * 1000).toISOString();
    const state = i % 10 === 0 ? 'failed' : 'succeeded';
    writeFileSync(
      join(dir, 'status.json'),
      JSON.stringify({ task_id: id, run_id: `run${i}`, task_type: 'base', task_name: 'demo', state, created_at: created, started_at: created, finished_at: created, exit_code: state === 'failed' ? 1 : 0, error: state === 'failed' ? 'RuntimeError: seeded' : '', steps: [{ name: 'compute', started_at: created, finished_at: created, percentage: 100 }] }),
    );
  }
}

// One service for the submit and follow tests (Tasks of their own names); the table and feed tests
// count every Task of theirs, and start their own.
const shared = await startTestService(t);

t.test('submit demo from its form and watch it succeed, with output, metadata and lineage', async (t) => {
  const { svc, page, errors } = await startConsole(t, { service: shared });
  await page.click('nav[aria-label="Sections"] >> text=Tasks');
  await page.click('text=New task');
  await page.click('.def-card:has(code:text-is("demo"))');
  await page.waitForSelector('[name=x]');
  t.ok(await page.isVisible('[name=task_name]'), 'base inputs are part of the form');
  await page.fill('[name=x]', '2');
  await page.fill('[name=y]', '3');
  await page.fill('[name=task_name]', 'first');
  await screenshot(page, 'task-submit');
  await page.click('.schema-form button[type=submit]');
  await page.waitForURL(/#\/tasks\/base%23demo%23first$/);
  await page.waitForSelector('.page-head [data-state="succeeded"]');
  t.match(await page.textContent('section[aria-label="Result"]'), /"result": 5/);
  t.match(await page.textContent('section[aria-label="Result"]'), /"branch": "different"/);
  await page.waitForSelector('section[aria-label="Metadata"] .code');
  t.match(await page.textContent('section[aria-label="Metadata"]'), /"reg_name": "demo"/);

  // A second Task built on the first: the lineage graph draws both, linked.
  const second = await svc.call('submit', { task: 'demo', x: 1, y: 1, task_name: 'second', source_tasks: 'base#demo#first' });
  t.equal(second.body.success, true);
  await page.goto(`${svc.url}/#/tasks/${encodeURIComponent('base#demo#second')}`);
  await page.waitForSelector('.page-head [data-state="succeeded"]');
  await page.waitForSelector('svg.lineage');
  t.equal(await page.locator('svg.lineage a').count(), 2, 'two nodes');
  t.equal(await page.locator('svg.lineage path.edge').count(), 1, 'one edge');
  t.equal(await page.locator('svg.lineage a.selected').getAttribute('aria-label'), 'base#demo#second succeeded');
  await page.waitForSelector('.page-head [data-state="succeeded"]');
  await screenshot(page, 'task-detail', { fullPage: true });
  await page.click('svg.lineage a:not(.selected)');
  await page.waitForURL(/base%23demo%23first$/);
  t.same(errors, []);
});

t.test('follow a sleep Task’s log live, then cancel it', async (t) => {
  const { svc, page, errors } = await startConsole(t, { service: shared });
  const logReads: string[] = [];
  page.on('request', (r) => {
    if (r.url().endsWith('/jobs/read_task_log')) logReads.push(r.postData() ?? '');
  });
  // Two log lines a second: enough to see the log grow; every line redraws the page, and a faster
  // Task costs CPU for as long as the test runs and keeps moving the Cancel button under the mouse.
  const handle = await svc.call('submit', { task: 'sleep', seconds: 60, steps: 120, task_name: 'nap' });
  const id = handle.body.answer.task_id;
  await page.goto(`${svc.url}/#/tasks/${encodeURIComponent(id)}`);
  await page.waitForSelector('.log:has-text("step 3/120")');
  await page.waitForSelector('.page-head [data-state="running"]');
  const first = (await page.textContent('.log'))!.length;
  await page.waitForSelector('.log:has-text("step 6/120")');
  t.ok((await page.textContent('.log'))!.length > first, 'the log grows without reloading');
  const text = (await page.textContent('.log'))!;
  t.equal(text.match(/step 3\/120\n/g)?.length, 1, 'each line once: nothing was fetched twice');
  t.ok(await page.isVisible('.step[data-step="sleep"] [role=progressbar]'), 'the step has a progress bar');
  await screenshot(page, 'task-log');

  page.once('dialog', (d) => void d.accept()); // Cancel asks for confirmation, as Delete does.
  await page.click('button:text-is("Cancel")');
  await page.waitForSelector('[role=status]:has-text("Cancellation requested")');
  await page.waitForSelector('.page-head [data-state="cancelled"]');
  const status = await svc.call('status', { task_id: id });
  t.equal(status.body.answer.state, 'cancelled');
  t.ok(await page.isEnabled('button:text-is("Delete")'), 'a finished Task can be deleted');
  // The live log came from stream_task events; after the end only the bytes past the window's
  // end may be read (never from the start again).
  const offsets = logReads.map((body) => (JSON.parse(body) as { arguments: { offset: number } }).arguments.offset);
  t.ok(offsets.every((o) => o > 0), `log reads start past what is held (${offsets.join(', ') || 'none'})`);

  page.once('dialog', (d) => void d.accept());
  await page.click('button:text-is("Delete")');
  await page.waitForURL(/#\/tasks$/);
  await waitFor(async () => !(await svc.call('list_task_ids')).body.answer.includes(id), 5000, 'the Task to be deleted');
  t.same(errors, []);
});

t.test('the task table updates live and filters by state', async (t) => {
  const { svc, page, errors } = await startConsole(t);
  await page.goto(`${svc.url}/#/tasks`);
  await page.waitForSelector('.vtable .notice-empty');
  await svc.call('submit', { task: 'demo', x: 1, y: 2, task_name: 'ok-one' });
  await svc.call('submit', { task: 'demo', x: 1, y: 2, fail: true, task_name: 'bad-one' });
  await page.waitForSelector('.vt-spacer .vt-row:has-text("ok-one") [data-state="succeeded"]');
  await page.waitForSelector('.vt-spacer .vt-row:has-text("bad-one") [data-state="failed"]');
  t.pass('new Tasks appear without a reload');
  await page.click('.chip-failed');
  // Counted from here, not by a string predicate in the page: polling a string evaluates it, which
  // the console's CSP (script-src 'self') refuses whenever the first check does not already hold.
  await waitFor(async () => (await page.$$('.vt-spacer .vt-row')).length === 1 || undefined, 10_000, 'one failed row');
  t.match(await page.textContent('.vt-spacer'), /bad-one/);
  t.match(page.url(), /state=failed/, 'the filter is kept in the URL');
  await page.click('.vt-spacer .vt-row');
  await page.waitForSelector('.error-text');
  t.match(await page.textContent('.error-text'), /RuntimeError: Demo failure requested/);
  t.same(errors, []);
});

t.test('the Tasks page reads the list once, then only the changes since (query_task_statuses)', async (t) => {
  // Not opened yet: every call the Tasks page makes is seen, from its first read (a page opened
  // first would already be on Tasks, and a second Tasks page would read the whole list again).
  const { svc, page, errors } = await startConsole(t, { open: false });
  const calls: Array<{ job: string; args: Record<string, unknown> }> = [];
  page.on('request', (req) => {
    const job = /\/jobs\/([a-z_]+)$/.exec(new URL(req.url()).pathname)?.[1];
    if (job && req.method() === 'POST') calls.push({ job, args: (JSON.parse(req.postData() ?? '{}') as { arguments?: Record<string, unknown> }).arguments ?? {} });
  });
  const first = await svc.call('submit', { task: 'demo', x: 1, y: 2, task_name: 'feed-one' });
  t.equal(first.body.success, true);
  await page.goto(`${svc.url}/#token=${encodeURIComponent(svc.token!)}`);
  await page.waitForSelector('.vt-row:has-text("feed-one")');
  await page.waitForSelector('.page-head :text("1 of 1 Tasks")');

  const second = await svc.call('submit', { task: 'demo', x: 2, y: 2, task_name: 'feed-two' });
  t.equal(second.body.success, true);
  await page.waitForSelector('.vt-row:has-text("feed-two")');
  await page.waitForSelector('.page-head :text("2 of 2 Tasks")');
  t.match(await page.textContent('.vt-spacer .vt-row'), /feed-two/, 'the new Task is listed first');
  await waitFor(async () => (await svc.call('status', { task_id: 'base#demo#feed-one' })).body.answer.state === 'succeeded', 15_000, 'first Task finished');
  t.same((await svc.call('delete_tasks', { task_ids: ['base#demo#feed-one'] })).body.answer, ['base#demo#feed-one']);
  await page.waitForSelector('.page-head :text("1 of 1 Tasks")');
  t.equal(await page.locator('.vt-row:has-text("feed-one")').count(), 0, 'a deleted Task leaves the table');

  t.notOk(calls.some((c) => c.job === 'list_task_statuses'), 'the whole list is never asked for');
  const polls = calls.filter((c) => c.job === 'query_task_statuses');
  t.ok(polls.length >= 3, `the page polls query_task_statuses (${polls.length} calls)`);
  t.ok(polls.slice(1).every((c) => typeof c.args['changed_since'] === 'string'), 'after the first read, only changes since its version');
  t.same(errors, []);
});

t.test('thousands of Tasks: the table draws only what is in view and stays usable', async (t) => {
  const workspace = await memoryDir(t, 'taskyard-scale-');
  seedTasks(workspace);
  const { svc, page, errors } = await startConsole(t, { workspace });
  await page.goto(`${svc.url}/#/tasks`);
  await page.waitForSelector(`.page-head :text("${COUNT} of ${COUNT} Tasks")`);
  const drawn = await page.locator('.vt-spacer .vt-row').count();
  t.ok(drawn > 5 && drawn < 80, `only the rows in view are in the page (${drawn} of ${COUNT})`);
  t.equal(await page.getAttribute('.vtable', 'aria-rowcount'), String(COUNT + 1), 'assistive technology still hears the full size');
  t.match(await page.textContent('.vt-spacer .vt-row'), /t-2999/, 'newest first');
  await screenshot(page, 'tasks');

  await page.$eval('.vt-viewport', (el) => el.scrollTo(0, el.scrollHeight));
  await page.waitForSelector('.vt-spacer .vt-row:has-text("t-0000")');
  t.pass('scrolling to the end draws the oldest Task');

  await page.click('.chip-failed');
  await page.waitForSelector(`.page-head :text("${COUNT / 10} of ${COUNT} Tasks")`);
  await page.fill('input[aria-label="Filter by Task ID"]', 't-12');
  await page.waitForSelector('.page-head :text("10 of 3000 Tasks")');
  t.pass('state and text filters narrow the table at once');
  t.same(errors, []);
});
