import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { screenshot, startConsole, waitFor } from '../helpers/browser.js';
import { burnArgv, fixtureNvidiaSmi } from '../machine/fixture-nvidia-smi.js';
import { submitOk, waitTask } from '../tasks/task-helpers.js';
import { closedPort, startReceiver } from '../webhooks/receiver.js';

// The Machine page. The tests share this file's process and browser (one chromium start instead of
// two); each still gets a service and a browser context of its own, as when each had a file to itself.

const SECRET = 'console-secret-0123456789';

t.test('Machine page: live charts of CPU, memory and each GPU that grow while the service samples, and the running Tasks', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-console-history-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const { svc, page, errors } = await startConsole(t, {
    config: { machine: { history: { interval_ms: 250, window_s: 60 }, gpu_commands: { nvidia_smi: await fixtureNvidiaSmi(dir), rocm_smi: join(dir, 'no-rocm-smi') } } },
  });
  const submitted = (await svc.call('submit', { task: 'command', argv: burnArgv(2), task_name: 'burn' })).body;
  t.equal(submitted.success, true, 'a CPU-burning command Task is submitted');
  if (!submitted.success) return;
  const id = submitted.answer.task_id;
  t.teardown(async () => {
    await svc.call('cancel', { task_id: id });
    await svc.call('wait_task', { task_id: id });
  });
  await page.goto(`${svc.url}/#/machine`);

  const chart = (series: string) => `section[aria-label="History"] figure.metric-chart[data-series="${series}"]`;
  const points = (series: string) => page.locator(chart(series)).evaluate((f) => Number(f.getAttribute('data-points')));
  await page.waitForSelector(`${chart('cpu')} canvas`);
  for (const series of ['memory', 'gpu-nvidia-0', 'gpu-nvidia-1']) await page.waitForSelector(`${chart(series)} canvas`);
  t.pass('a chart each of CPU, memory and both GPUs');
  const first = await points('cpu');
  t.ok(first >= 1, `the CPU chart has ${first} points`);
  await waitFor(async () => (await points('cpu')) >= first + 3, 20_000, 'three more points on the CPU chart');
  t.pass('the CPU chart grows while the service samples, without a reload');
  const counts = await page.locator('section[aria-label="History"] figure.metric-chart').evaluateAll((figs) => figs.map((f) => f.getAttribute('data-points')));
  t.equal(new Set(counts).size, 1, `every chart grows with it (${counts.join(', ')} points)`);
  t.match(await page.textContent(`${chart('gpu-nvidia-1')} figcaption`), /GPU 1 \(NVIDIA H100 80GB HBM3\) utilization %/);

  const row = `section[aria-label="History"] table[aria-label="Running Tasks"] tr[data-task="${id}"]`;
  await waitFor(async () => /^[1-9]\d*(\.\d)? %$/.test((await page.locator(`${row} .task-cpu`).textContent()) ?? ''), 20_000, 'the Task to show CPU');
  t.pass('the burning Task is listed with its CPU');
  t.match(await page.textContent(`${row} .task-rss`), /\d+(\.\d+)? (MiB|GiB)/, 'and its RSS');
  t.equal(await page.textContent(`${row} .task-gpu-memory`), '2.0 GiB', 'and the GPU memory its processes hold');
  const sparkPoints = async () => ((await page.locator(`${row} svg.sparkline polyline`).getAttribute('points')) ?? '').split(' ').length;
  await waitFor(async () => (await sparkPoints()) >= 5, 20_000, 'five points on the sparkline');
  t.pass('with a sparkline of its recent CPU, which grows');
  await screenshot(page, 'machine-history', { fullPage: true });

  await svc.call('cancel', { task_id: id });
  await page.waitForSelector(row, { state: 'detached' });
  t.pass('an ended Task leaves the table');
  t.same(errors, []);
});

t.test('Machine page: a Webhooks card per endpoint, URL without credentials, pending, last delivery and last error; no secret', async (t) => {
  const receiver = await startReceiver(t);
  const down = await closedPort();
  const withCredentials = receiver.url.replace('http://', 'http://hookuser:hookpass@');
  const { svc, page, errors } = await startConsole(t, {
    config: {
      webhooks: [
        { url: withCredentials, events: ['task.succeeded'], secret: SECRET },
        { url: `http://127.0.0.1:${down}/down`, events: ['task.succeeded'], secret: SECRET },
      ],
    },
  });
  await waitTask(svc, await submitOk(t, svc, { task: 'demo', x: 1, y: 2 }));
  await waitFor(() => receiver.accepted.size === 1, 15_000, 'the delivery');
  await page.click('nav[aria-label="Sections"] >> text=Machine');
  const rows = 'section[aria-label="Webhooks"] tbody tr';
  const read = () => page.$$eval(rows, (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent ?? '')));
  // The card refreshes every few seconds: wait until it shows the delivery and the refused attempt.
  await waitFor(async () => { const r = await read(); return r.length === 2 && r[0]![5] !== '—' && r[1]![6] !== '—'; }, 20_000, 'the card to show both endpoints').catch(() => undefined);
  const table = await read();
  t.equal(table.length, 2, 'one row per endpoint');
  t.equal(table[0]![0], receiver.url, 'the URL without its credentials');
  t.same([table[0]![2], table[0]![3]], ['0', '1'], 'nothing pending, one delivered');
  t.match(table[0]![5], /^\d{4}-\d\d-\d\dT/, 'last delivery');
  t.equal(table[1]![2], '1', 'the delivery to the closed port is pending');
  t.match(table[1]![6], /ECONNREFUSED/, 'with its last error');
  const card = (await page.textContent('section[aria-label="Webhooks"]')) ?? '';
  t.notMatch(card, /hookpass|console-secret/, 'no credentials, no secret');
  t.same(errors, []);
});
