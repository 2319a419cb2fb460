import t from 'tap';
import { startConsole } from '../helpers/browser.js';

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
