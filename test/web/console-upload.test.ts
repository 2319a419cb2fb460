import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { screenshot, startConsole } from '../helpers/browser.js';

/** The page's drag-and-drop objects (this runs in the page; tests compile without DOM types). */
type Dropping = {
  document: { querySelector(s: string): { dispatchEvent(e: unknown): boolean } | null };
  DataTransfer: new () => { items: { add(f: unknown): void } };
  File: new (parts: string[], name: string) => unknown;
  DragEvent: new (type: string, init: { dataTransfer: unknown; bubbles: boolean; cancelable: boolean }) => unknown;
};

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
