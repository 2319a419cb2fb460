import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import t from 'tap';
import { ok } from '../../schemas/job-response.js';
import { DEFAULT_CAPABILITIES } from '../../app/default-capabilities.js';
import { defineJob } from '../../core/job.js';
import { startConsole, waitFor } from '../helpers/browser.js';
import { startTestService } from '../helpers/service.js';

/** A Job with a Markdown description and a required field, to see both in the console's form. */
const markdownJob = defineJob({
  name: 'md_form',
  output: Type.Unknown(),
  description: 'Takes a **name**.\n\n- first point\n- second point',
  input: Type.Object({ name: Type.String({ minLength: 1 }), note: Type.Optional(Type.Union([Type.String(), Type.Null()])) }, { additionalProperties: false }),
  run: async (args) => ok(args),
});

// One service for the tests that need none of their own (each still gets its own browser context),
// with the Job whose form one of them checks.
const shared = await startTestService(t, { capabilities: [...DEFAULT_CAPABILITIES.slice(0, -1), () => ({ jobs: [markdownJob] }), DEFAULT_CAPABILITIES.at(-1)!] });

const taskPage = (url: string, id: string) => `${url}/#/tasks/${encodeURIComponent(id)}`;

t.test('the lineage graph routes every edge around the boxes it does not join', async (t) => {
  const { svc, page, errors } = await startConsole(t, { service: shared });
  await svc.call('submit', { task: 'demo', x: 1, y: 1, task_name: 'root' });
  await svc.call('submit', { task: 'demo', x: 1, y: 1, task_name: 'child', source_tasks: 'base#demo#root' });
  await svc.call('submit', { task: 'demo', x: 1, y: 1, task_name: 'grandchild', source_tasks: 'base#demo#child,base#demo#ghost' });
  await page.goto(taskPage(svc.url, 'base#demo#grandchild'));
  await page.waitForSelector('.page-head [data-state="succeeded"]');
  await page.waitForSelector('svg.lineage path.edge[data-from="base#demo#ghost"]');
  t.equal(await page.locator('svg.lineage path.edge').count(), 3);
  // Sample each edge along its length; no sample may fall inside a box other than its two ends.
  const crossings = (await page.evaluate(`(() => {
    const boxes = [...document.querySelectorAll('svg.lineage a[data-task-id]')].map((a) => {
      const r = a.querySelector('rect');
      return { id: a.dataset.taskId, x: r.x.baseVal.value, y: r.y.baseVal.value, w: r.width.baseVal.value, h: r.height.baseVal.value };
    });
    const out = [];
    for (const edge of document.querySelectorAll('svg.lineage path.edge')) {
      const ends = [edge.dataset.from, edge.dataset.to];
      const length = edge.getTotalLength();
      for (let i = 0; i <= 100; i++) {
        const p = edge.getPointAtLength((length * i) / 100);
        for (const b of boxes) {
          if (ends.includes(b.id)) continue;
          if (p.x > b.x + 1 && p.x < b.x + b.w - 1 && p.y > b.y + 1 && p.y < b.y + b.h - 1) out.push(ends.join(' → ') + ' under ' + b.id);
        }
      }
    }
    return [...new Set(out)];
  })()`)) as string[];
  t.same(crossings, [], 'no edge passes under a box');
  t.equal(await page.getAttribute('svg.lineage a[data-task-id="base#demo#ghost"]', 'aria-label'), 'base#demo#ghost missing');
  t.same(errors, []);
});

t.test('a running Task: no exit code yet, its lineage node says running; cancel asks first; texts fit each state', async (t) => {
  const { svc, page, errors } = await startConsole(t, { service: shared });
  const handle = await svc.call('submit', { task: 'sleep', seconds: 60, task_name: 'busy' });
  const id = handle.body.answer.task_id;
  await page.goto(taskPage(svc.url, id));
  await page.waitForSelector('.page-head [data-state="running"]');
  const exitCode = page.locator('section[aria-label="Status"] dt:text-is("exit code") + dd');
  t.equal(await exitCode.textContent(), '—', 'no exit code while it runs');
  await page.waitForSelector('svg.lineage a.selected[aria-label$=" running"]');
  t.pass('the lineage node shows the live state');

  // Dismissing the confirmation cancels nothing.
  page.once('dialog', (d) => void d.dismiss());
  await page.click('button:text-is("Cancel")');
  t.equal((await svc.call('status', { task_id: id })).body.answer.state, 'running', 'a dismissed confirmation cancels nothing');
  let question = '';
  page.once('dialog', (d) => {
    question = d.message();
    void d.accept();
  });
  await page.click('button:text-is("Cancel")');
  await page.waitForSelector('.page-head [data-state="cancelled"]');
  t.match(question, `Cancel ${id}?`);
  t.equal(await exitCode.textContent(), '130', 'the exit code once it ended');
  t.equal(await page.textContent('section[aria-label="Result"] .notice'), 'No result: the Task was cancelled.');
  await page.waitForSelector('svg.lineage a.selected[aria-label$=" cancelled"]');

  // A succeeded Task whose definition has no steps says so, not "No steps started yet."
  await svc.call('submit', { task: 'demo', x: 2, y: 2, task_name: 'plain' });
  await waitFor(async () => (await svc.call('status', { task_id: 'base#demo#plain' })).body.answer.state === 'succeeded', 20_000);
  const status = (await svc.call('status', { task_id: 'base#demo#plain' })).body.answer;
  await page.goto(taskPage(svc.url, 'base#demo#plain'));
  await page.waitForSelector('.page-head [data-state="succeeded"]');
  const steps = await page.textContent('section[aria-label="Steps"]');
  if (status.steps.length === 0) t.match(steps, 'This Task recorded no steps.');
  t.notMatch(steps, 'No steps started yet.');

  // One date format, local, with the ISO time in the tooltip.
  const created = page.locator('section[aria-label="Status"] dt:text-is("created") + dd time');
  t.equal(await created.getAttribute('title'), status.created_at);
  const shown = (await created.textContent())!;
  const createdAt = status.created_at;
  if (createdAt === null) throw new Error('a succeeded Task has its created_at');
  const expected = await page.evaluate((iso) => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' }).format(Date.parse(iso)), createdAt);
  t.equal(shown, expected);
  await page.goto(`${svc.url}/#/tasks`);
  const row = page.locator('.vt-spacer .vt-row:has-text("plain") time');
  t.equal(await row.textContent(), expected, 'the table uses the same format');
  t.same(errors, []);
});

t.test('metadata is not clipped', async (t) => {
  const { svc, page, errors } = await startConsole(t, { service: shared });
  await svc.call('submit', { task: 'demo', x: 123456789, y: 987654321, task_name: 'wide-metadata-name-for-wrapping' });
  await waitFor(async () => (await svc.call('status', { task_id: 'base#demo#wide-metadata-name-for-wrapping' })).body.answer.state === 'succeeded', 20_000);
  await page.goto(taskPage(svc.url, 'base#demo#wide-metadata-name-for-wrapping'));
  await page.waitForSelector('section[aria-label="Metadata"] .code');
  const clipped = await page.$eval('section[aria-label="Metadata"] .code', (el) => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1);
  t.equal(clipped, false, 'the whole metadata is visible without scrolling inside the box');
  t.same(errors, []);
});

t.test('forms: Markdown descriptions, red only after touching, no "null" placeholder', async (t) => {
  const { svc, page, errors } = await startConsole(t, { service: shared });
  await page.goto(`${svc.url}/#/jobs/md_form`);
  await page.waitForSelector('#job-title:has-text("md_form")');
  t.equal(await page.textContent('.job-runner .description strong'), 'name', 'Markdown is rendered');
  t.equal(await page.locator('.job-runner .description li').count(), 2);
  const name = page.locator('.schema-form [name=name]');
  const border = () => page.evaluate(`getComputedStyle(document.querySelector('.schema-form [name=name]')).borderTopColor`);
  const untouched = await border();
  t.equal(await name.evaluate((el) => el.matches(':user-invalid')), false, 'an untouched required field is not marked');
  await name.fill('x');
  await name.fill('');
  await name.blur();
  t.equal(await name.evaluate((el) => el.matches(':user-invalid')), true, 'marked once touched and left empty');
  t.not(await border(), untouched, 'and drawn red');
  t.equal(await page.getAttribute('.schema-form [name=note]', 'placeholder'), null, 'no "null" placeholder');
  t.same(errors, []);
});

t.test('Machine page lists which Task holds which GPU; the Task page names its Slurm job', async (t) => {
  const { svc, page, errors } = await startConsole(t, { config: { service: { gpus: 2 }, tasks: { sleep: { resources: { gpus: 1 } } } } });
  const handle = (await svc.call('submit', { task: 'sleep', seconds: 120 })).body.answer;
  await waitFor(async () => (await svc.call('status', { task_id: handle.task_id })).body.answer.state === 'running', 15_000, 'the sleep to run');

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
