import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { screenshot, startConsole, waitFor } from '../helpers/browser.js';

/** A short "training" whose last loss is 1 / (1 + 19 * LR). */
const TRAIN = ['import os, taskyard_task as tt', 'lr = float(os.environ["LR"])', 'for step in range(20):', '    tt.metric("loss", 1 / (1 + lr * step), step=step)', 'tt.output({"final_lr": lr})'].join('\n');

/** Column positions in a row: the compare box, seven built-in columns, then the added ones. */
const NAME = 4;
const ADDED = 8;

/** The rows in view, top to bottom: the instance name and the texts of the added columns. */
function rows(page: Page): Promise<string[][]> {
  return page.$$eval('.vt-spacer .vt-row', (els, [name, added]) => {
    const sorted = [...els].sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top);
    return sorted.map((r) => [r.children[name]!.textContent ?? '', ...[...r.children].slice(added).map((c) => c.textContent ?? '')]);
  }, [NAME, ADDED] as const);
}

/** Waits until the table shows exactly `expected` (values are read in the background). */
async function expectRows(t: Test, page: Page, expected: string[][], what: string): Promise<void> {
  let last: string[][] = [];
  await waitFor(async () => JSON.stringify((last = await rows(page))) === JSON.stringify(expected), 10_000, what).catch(() => undefined);
  t.same(last, expected, what);
}

async function addColumn(page: Page, kind: string, name: string): Promise<void> {
  await page.selectOption('select[aria-label="Column kind"]', kind);
  await page.fill('input[aria-label="Column name"]', name);
  await page.click('button:text("Add column")');
}

t.test('the Tasks table shows chosen input, output and final-metric columns, sorts by them, and keeps them across a reload', async (t) => {
  const { svc, page, errors } = await startConsole(t);
  const submit = async (args: Record<string, unknown>) => {
    const res = (await svc.call('submit', args)).body;
    if (!res.success) throw new Error(JSON.stringify(res));
    await svc.call('wait_task', { task_id: res.answer.task_id, run_id: res.answer.run_id });
  };
  await submit({ task: 'demo', x: 2, y: 3, task_name: 'd-a' });
  await submit({ task: 'demo', x: 10, y: 1, task_name: 'd-b' });
  await submit({ task: 'demo', x: -4, y: 0, task_name: 'd-c' });
  await submit({ task: 'command', argv: ['python3', '-c', TRAIN], env: { LR: '0.5' }, task_name: 'lr-a' });
  await submit({ task: 'command', argv: ['python3', '-c', TRAIN], env: { LR: '2' }, task_name: 'lr-b' });

  await page.goto(`${svc.url}/#/tasks`);
  await page.waitForSelector('.vt-spacer .vt-row');
  await page.click('.column-picker > summary');
  await addColumn(page, 'input', 'x');
  await addColumn(page, 'output', 'result');
  await addColumn(page, 'metric', 'loss');
  await page.click('.column-picker > summary');
  t.same(await page.$$eval('.vt-head [role="columnheader"]', (hs) => hs.slice(8).map((h) => h.textContent)), ['x', 'result', 'loss'], 'one header per added column');
  // Newest first, as before; a Task without the field shows a dash.
  await expectRows(t, page, [['lr-b', '—', '—', '0.025641'], ['lr-a', '—', '—', '0.0952381'], ['d-c', '-4', '-4', '—'], ['d-b', '10', '11', '—'], ['d-a', '2', '5', '—']], 'input, output and final-metric values');

  await page.click('button[aria-label="Sort by input x"]');
  await expectRows(t, page, [['d-c', '-4', '-4', '—'], ['d-a', '2', '5', '—'], ['d-b', '10', '11', '—'], ['lr-b', '—', '—', '0.025641'], ['lr-a', '—', '—', '0.0952381']], 'ascending by x, numerically; missing values last');
  t.equal(await page.getAttribute('.vt-head [role="columnheader"]:has(button[aria-label="Sort by input x"])', 'aria-sort'), 'ascending');
  await page.click('button[aria-label="Sort by input x"]');
  await expectRows(t, page, [['d-b', '10', '11', '—'], ['d-a', '2', '5', '—'], ['d-c', '-4', '-4', '—'], ['lr-b', '—', '—', '0.025641'], ['lr-a', '—', '—', '0.0952381']], 'descending by x; missing values still last');
  t.equal(await page.getAttribute('.vt-head [role="columnheader"]:has(button[aria-label="Sort by input x"])', 'aria-sort'), 'descending');
  await page.click('button[aria-label="Sort by metric loss"]');
  await expectRows(t, page, [['lr-b', '—', '—', '0.025641'], ['lr-a', '—', '—', '0.0952381'], ['d-c', '-4', '-4', '—'], ['d-b', '10', '11', '—'], ['d-a', '2', '5', '—']], 'ascending by final loss');
  await page.click('button[aria-label="Sort by metric loss"]');
  await expectRows(t, page, [['lr-a', '—', '—', '0.0952381'], ['lr-b', '—', '—', '0.025641'], ['d-c', '-4', '-4', '—'], ['d-b', '10', '11', '—'], ['d-a', '2', '5', '—']], 'descending by final loss');
  await screenshot(page, 'tasks-columns');

  await page.reload();
  await page.waitForSelector('.vt-spacer .vt-row');
  await expectRows(t, page, [['lr-a', '—', '—', '0.0952381'], ['lr-b', '—', '—', '0.025641'], ['d-c', '-4', '-4', '—'], ['d-b', '10', '11', '—'], ['d-a', '2', '5', '—']], 'after a reload: the same columns, sorted the same way');

  await page.click('.column-picker > summary');
  await page.click('button[aria-label="Remove column metric loss"]');
  await expectRows(t, page, [['lr-b', '—', '—'], ['lr-a', '—', '—'], ['d-c', '-4', '-4'], ['d-b', '10', '11'], ['d-a', '2', '5']], 'removing the sorted column removes its sort');
  await page.reload();
  await page.waitForSelector('.vt-spacer .vt-row');
  await expectRows(t, page, [['lr-b', '—', '—'], ['lr-a', '—', '—'], ['d-c', '-4', '-4'], ['d-b', '10', '11'], ['d-a', '2', '5']], 'and the removal is kept');

  await page.click('.column-picker > summary');
  await addColumn(page, 'input', 'task_name');
  await page.click('.column-picker > summary');
  await page.click('button[aria-label="Sort by input task_name"]');
  const byName = ['d-a', 'd-b', 'd-c', 'lr-a', 'lr-b'];
  const xs: Record<string, string[]> = { 'd-a': ['2', '5'], 'd-b': ['10', '11'], 'd-c': ['-4', '-4'], 'lr-a': ['—', '—'], 'lr-b': ['—', '—'] };
  await expectRows(t, page, byName.map((n) => [n, ...xs[n]!, n]), 'text sorts lexically');
  t.same(errors, []);
});
