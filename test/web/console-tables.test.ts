import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { screenshot, startConsole, waitFor } from '../helpers/browser.js';

// The Tasks table and the workspace listing. The tests share this file's process and browser (one
// chromium start instead of four); each still gets a service and a browser context of its own, as
// when each had a file to itself.

/** A short "training": its loss falls at the rate LR gives it (the last loss is 1 / (1 + 19 * LR)). */
const TRAIN = ['import os, taskyard_task as tt', 'lr = float(os.environ["LR"])', 'for step in range(20):', '    tt.metric("loss", 1 / (1 + lr * step), step=step)', 'tt.output({"final_lr": lr})'].join('\n');

/** The page's drag-and-drop objects (this runs in the page; tests compile without DOM types). */
type Dropping = {
  document: { querySelector(s: string): { dispatchEvent(e: unknown): boolean } | null };
  DataTransfer: new () => { items: { add(f: unknown): void } };
  File: new (parts: string[], name: string) => unknown;
  DragEvent: new (type: string, init: { dataTransfer: unknown; bubbles: boolean; cancelable: boolean }) => unknown;
};

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

t.test('three runs selected in the Tasks table compare side by side: differences marked, final metrics, curves overlaid', async (t) => {
  const { svc, page, errors } = await startConsole(t);
  const ids: string[] = [];
  for (const [name, lr] of [['lr-a', '0.1'], ['lr-b', '0.5'], ['lr-c', '2']] as const) {
    const res = (await svc.call('submit', { task: 'command', argv: ['python3', '-c', TRAIN], env: { LR: lr }, task_name: name })).body;
    if (!res.success) {
      t.fail(JSON.stringify(res));
      return;
    }
    ids.push(res.answer.task_id);
    await svc.call('wait_task', { task_id: res.answer.task_id, run_id: res.answer.run_id });
  }
  await page.goto(`${svc.url}/#/tasks`);
  for (const id of ids) await page.click(`input.row-select[aria-label="Select ${id} to compare"]`);
  t.equal(page.url().includes('/tasks/'), false, 'ticking a box does not open the Task');
  await page.click('.page-head a.button:text("Compare 3")');
  await page.waitForSelector('section[aria-label="Metric curves"] figure.overlay canvas');

  const row = (section: string, field: string) => page.locator(`section[aria-label="${section}"] tr[data-field="${field}"]`);
  t.equal(await row('Inputs', 'env').getAttribute('class'), 'differs', 'the inputs that differ are marked');
  t.equal(await row('Inputs', 'argv').getAttribute('class'), null, 'the same script is not');
  t.same(await row('Outputs', 'final_lr').locator('td').allTextContents(), ['0.1', '0.5', '2']);
  t.same(await row('Final metrics', 'loss').locator('td').allTextContents(), ['0.344828', '0.0952381', '0.025641'], 'the final loss of each run');
  t.equal(await page.getAttribute('figure.overlay[data-metric="loss"]', 'data-series'), '3', 'one curve per run in one chart');
  t.same(await page.locator('figure.overlay .u-legend .u-label').allTextContents().then((l) => l.slice(1)), ['lr-a', 'lr-b', 'lr-c'], 'a legend names the runs');
  await screenshot(page, 'compare', { fullPage: true });
  t.same(errors, []);
});

t.test('the workspace listing keeps every column in view while a preview is open', async (t) => {
  const { svc, page, errors } = await startConsole(t);
  await mkdir(join(svc.workspace, 'experiments'), { recursive: true });
  await writeFile(join(svc.workspace, 'experiments', 'a-rather-long-results-file-name-of-an-experiment.csv'), 'a,b\n1,2\n');
  await writeFile(join(svc.workspace, 'experiments', 'notes.md'), '# Notes\n');
  await page.goto(`${svc.url}/#/workspace?path=experiments&file=experiments%2Fnotes.md`);
  await page.waitForSelector('.preview-body h1:text("Notes")');
  const fits = await page.locator('section[aria-label="Folder contents"]').evaluate((card) => {
    const box = card.getBoundingClientRect();
    return [...card.querySelectorAll('thead th, tbody tr:last-child td')].map((c) => {
      const r = c.getBoundingClientRect();
      return { text: c.textContent, inside: r.right <= box.right + 1 && r.width > 0 };
    });
  });
  t.same(fits.filter((c) => !c.inside), [], 'no column is cut off or scrolled out of the card');
  t.same(errors, []);
});

t.test('files dropped onto the workspace upload with a progress bar and land in the folder shown', async (t) => {
  const { svc, page, errors } = await startConsole(t);
  await page.goto(`${svc.url}/#/workspace`);
  await page.waitForSelector('section[aria-label="Folder contents"]');
  // A folder to drop into: made by moving a staged file there.
  const staged = await svc.fetch('/files', { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-file-name': 'keep.txt' }, body: 'k' });
  const { path } = ((await staged.json()) as { answer: { path: string } }).answer;
  await svc.call('move_entries', { moves: [{ from: path, to: 'data/keep.txt' }] });
  await page.goto(`${svc.url}/#/workspace?path=data`);
  await page.waitForSelector('.entries :text("keep.txt")');

  const big = 'x'.repeat(3 * 1024 * 1024);
  await page.evaluate((content) => {
    const w = globalThis as unknown as Dropping;
    const transfer = new w.DataTransfer();
    transfer.items.add(new w.File([content], 'train.csv'));
    transfer.items.add(new w.File(['a,b\n1,2\n'], 'small.csv'));
    const zone = w.document.querySelector('section[aria-label="Folder contents"]')!;
    for (const type of ['dragenter', 'dragover', 'drop']) zone.dispatchEvent(new w.DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }, big);
  await page.waitForSelector('.upload-row[data-file="train.csv"] [role="progressbar"]');
  t.pass('a progress bar per file');
  await page.waitForSelector('.upload-row[data-file="train.csv"][data-state="done"]', { timeout: 60_000 });
  await page.waitForSelector('.upload-row[data-file="small.csv"][data-state="done"]');
  await page.waitForSelector('.entries tr:has-text("train.csv") :text("3.0 MiB")');
  t.pass('the folder is listed again with the new files and their sizes');
  t.equal((await readFile(join(svc.workspace, 'data/train.csv'), 'utf8')).length, big.length, 'the bytes are in the folder shown');
  t.equal(await readFile(join(svc.workspace, 'data/small.csv'), 'utf8'), 'a,b\n1,2\n');
  await screenshot(page, 'workspace-upload');

  // The same name again: the drop says it is there already.
  await page.evaluate(() => {
    const w = globalThis as unknown as Dropping;
    const transfer = new w.DataTransfer();
    transfer.items.add(new w.File(['other'], 'small.csv'));
    const zone = w.document.querySelector('section[aria-label="Folder contents"]')!;
    for (const type of ['dragenter', 'dragover', 'drop']) zone.dispatchEvent(new w.DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
  });
  await page.waitForSelector('.upload-row[data-state="failed"] :text("data/small.csv exists")');
  t.equal(await readFile(join(svc.workspace, 'data/small.csv'), 'utf8'), 'a,b\n1,2\n', 'nothing is replaced');
  t.same(errors, []);
});
