import t from 'tap';
import { screenshot, startConsole } from '../helpers/browser.js';

t.test('Jobs page: the catalog, a form from the schema, a JobResponse and a live SSE view', async (t) => {
  const { svc, page, errors } = await startConsole(t);
  await page.click('nav[aria-label="Sections"] >> text=Jobs');
  await page.waitForSelector('.job-list a code');
  const names = await page.$$eval('.job-list a code', (els) => els.map((e) => e.textContent));
  const catalog = (await (await svc.fetch('/jobs')).json()) as { answer: { items: Array<{ name: string }> } };
  t.same(names, catalog.answer.items.map((j) => j.name), 'every public Job is listed, in catalog order');

  await page.click('.job-list a:has(code:text-is("version"))');
  await page.waitForSelector('#job-title:has-text("version")');
  t.match(await page.textContent('.schema-form'), /takes no arguments/);
  await page.click('.schema-form button[type=submit]');
  await page.waitForSelector('.response[data-success="true"]');
  const version = (await svc.call('version')).body.answer as string;
  t.equal((await page.textContent('.response .answer-text'))?.trim(), version, 'the answer is shown as returned');

  // submit's schema allows Task inputs beside `task`: the form offers a JSON box for them.
  await page.click('.job-list a:has(code:text-is("submit"))');
  await page.fill('[name=task]', 'demo');
  await page.fill('textarea[name="additional fields"]', '{"x": 2, "y": 3}');
  await page.click('text=Stream events');
  await page.waitForSelector('.response');
  t.ok((await page.locator('.raw-events .kind-progress').count()) > 0, 'the progress event arrived on the live view');
  t.match(await page.textContent('.response'), /"task_id": "base#demo#/, 'the final result carries the TaskHandle');
  await screenshot(page, 'jobs');

  // A schema violation shows the service's 422 details.
  await page.click('.job-list a:has(code:text-is("submit"))');
  await page.fill('[name=task]', 'demo');
  await page.fill('textarea[name="additional fields"]', '[1]');
  await page.click('.schema-form button[type=submit]');
  await page.waitForSelector('.notice-error');
  t.match(await page.textContent('.notice-error'), /Additional fields: must be a JSON object/);
  t.same(errors, []);
});

t.test('a business failure is shown as the service worded it', async (t) => {
  const { page } = await startConsole(t);
  await page.click('nav[aria-label="Sections"] >> text=Jobs');
  await page.click('.job-list a:has(code:text-is("get_task_definition"))');
  await page.fill('[name=task]', 'no-such-task');
  await page.click('.schema-form button[type=submit]');
  await page.waitForSelector('.response[data-success="false"]');
  t.match(await page.textContent('.response .answer-text'), /^ValueError: .*demo/s);
});
