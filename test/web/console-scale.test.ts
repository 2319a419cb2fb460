import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { screenshot, startConsole } from '../helpers/browser.js';

const COUNT = 3000;

/** Writes finished Task records straight into a workspace, as a long-lived service would have them. */
async function seedTasks(workspace: string): Promise<void> {
  const base = Date.parse('2026-01-01T00:00:00Z');
  for (let i = 0; i < COUNT; i++) {
    const name = `t-${String(i).padStart(4, '0')}`;
    const id = `base#demo#${name}`;
    const dir = join(workspace, 'base', id);
    await mkdir(dir, { recursive: true });
    const created = new Date(base + i * 1000).toISOString();
    const state = i % 10 === 0 ? 'failed' : 'succeeded';
    await writeFile(
      join(dir, 'status.json'),
      JSON.stringify({ task_id: id, run_id: `run${i}`, task_type: 'base', task_name: 'demo', state, created_at: created, started_at: created, finished_at: created, exit_code: state === 'failed' ? 1 : 0, error: state === 'failed' ? 'RuntimeError: seeded' : '', steps: [{ name: 'compute', started_at: created, finished_at: created, percentage: 100 }] }),
    );
  }
}

t.test('thousands of Tasks: the table draws only what is in view and stays usable', async (t) => {
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-scale-'));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  await seedTasks(workspace);
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
