import t from 'tap';
import { screenshot, startConsole } from '../helpers/browser.js';

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
