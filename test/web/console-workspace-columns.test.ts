import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { startConsole } from '../helpers/browser.js';

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
