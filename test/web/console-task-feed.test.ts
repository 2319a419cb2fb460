import t from 'tap';
import { startConsole, waitFor } from '../helpers/browser.js';

t.test('the Tasks page reads the list once, then only the changes since (query_task_statuses)', async (t) => {
  const { svc, page, errors } = await startConsole(t);
  const calls: Array<{ job: string; args: Record<string, unknown> }> = [];
  page.on('request', (req) => {
    const job = /\/jobs\/([a-z_]+)$/.exec(new URL(req.url()).pathname)?.[1];
    if (job && req.method() === 'POST') calls.push({ job, args: (JSON.parse(req.postData() ?? '{}') as { arguments?: Record<string, unknown> }).arguments ?? {} });
  });
  const first = await svc.call('submit', { task: 'demo', x: 1, y: 2, task_name: 'feed-one' });
  t.equal(first.body.success, true);
  await page.goto(`${svc.url}/#/tasks`);
  await page.waitForSelector('.vt-row:has-text("feed-one")');
  await page.waitForSelector('.page-head :text("1 of 1 Tasks")');

  const second = await svc.call('submit', { task: 'demo', x: 2, y: 2, task_name: 'feed-two' });
  t.equal(second.body.success, true);
  await page.waitForSelector('.vt-row:has-text("feed-two")');
  await page.waitForSelector('.page-head :text("2 of 2 Tasks")');
  t.match(await page.textContent('.vt-spacer .vt-row'), /feed-two/, 'the new Task is listed first');
  await waitFor(async () => ((await svc.call('status', { task_id: 'base#demo#feed-one' })).body.answer as { state: string }).state === 'succeeded', 15_000, 'first Task finished');
  t.same((await svc.call('delete_tasks', { task_ids: ['base#demo#feed-one'] })).body.answer, ['base#demo#feed-one']);
  await page.waitForSelector('.page-head :text("1 of 1 Tasks")');
  t.equal(await page.locator('.vt-row:has-text("feed-one")').count(), 0, 'a deleted Task leaves the table');

  t.notOk(calls.some((c) => c.job === 'list_task_statuses'), 'the whole list is never asked for');
  const polls = calls.filter((c) => c.job === 'query_task_statuses');
  t.ok(polls.length >= 3, `the page polls query_task_statuses (${polls.length} calls)`);
  t.ok(polls.slice(1).every((c) => typeof c.args['changed_since'] === 'string'), 'after the first read, only changes since its version');
  t.same(errors, []);
});
