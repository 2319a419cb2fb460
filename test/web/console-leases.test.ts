import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { startConsole } from '../helpers/browser.js';
import { waitFor } from '../helpers/service.js';

t.test('Machine page lists which Task holds which GPU; the Task page names its Slurm job', async (t) => {
  const { svc, page, errors } = await startConsole(t, { config: { service: { gpus: 2 }, tasks: { sleep: { resources: { gpus: 1 } } } } });
  const handle = (await svc.call('submit', { task: 'sleep', seconds: 120 })).body.answer as { task_id: string; run_id: string };
  await waitFor(async () => ((await svc.call('status', { task_id: handle.task_id })).body.answer as { state: string }).state === 'running', 15_000, 'the sleep to run');

  await page.click('nav[aria-label="Sections"] >> text=Machine');
  await page.waitForSelector('table[aria-label="GPU leases"] tbody tr');
  const rows = await page.$$eval('table[aria-label="GPU leases"] tbody tr', (trs) => trs.map((tr) => [tr.children[0]?.textContent, tr.children[1]?.textContent]));
  t.same(rows, [['0', handle.task_id]], 'GPU 0 is held by the running Task');

  // What the slurm executor writes beside the record; the console shows the job id of this run.
  const dir = join(svc.workspace, 'base', handle.task_id);
  await writeFile(join(dir, 'slurm_job.json'), JSON.stringify({ job_id: '4242', run_id: handle.run_id }));
  await page.click(`table[aria-label="GPU leases"] a:has-text("${handle.task_id}")`);
  await page.waitForSelector('[data-slurm-job="4242"]');
  t.pass('the Task page shows the Slurm job id');

  await svc.call('cancel', { task_id: handle.task_id });
  await page.click('nav[aria-label="Sections"] >> text=Machine');
  await page.waitForSelector('section:has(h2:text("GPUs")) .notice-empty:has-text("No GPU is leased")');
  t.pass('the lease is gone once the Task ends');
  t.same(errors, []);
});
