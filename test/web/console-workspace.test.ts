import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { screenshot, startConsole } from '../helpers/browser.js';

async function seed(workspace: string): Promise<void> {
  await mkdir(join(workspace, 'data'), { recursive: true });
  await mkdir(join(workspace, 'notes'), { recursive: true });
  const rows = Array.from({ length: 450 }, (_, i) => `${i + 1},sensor-${i % 7},${(15 + (i % 13) * 1.1).toFixed(2)},${i % 3 === 0}`);
  await writeFile(join(workspace, 'data', 'measurements.csv'), `id,sensor,temperature,ok\n${rows.join('\n')}\n`);
  await writeFile(join(workspace, 'data', 'config.json'), JSON.stringify({ model: 'resnet', layers: [1, 2, 3], dropout: 0.1, pretrained: true, notes: null }, null, 1));
  await writeFile(join(workspace, 'data', 'params.yaml'), '# training\nlr: 0.0003\nepochs: 20\nname: "baseline"\n');
  await writeFile(
    join(workspace, 'notes', 'README.md'),
    '---\ntitle: Experiment notes\ntags: [baseline, v2]\n---\n# Baseline run\n\nThe **baseline** uses `lr=3e-4`.\n\n<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">\n\n[bad](javascript:alert(1)) [good](https://example.org)\n',
  );
}

t.test('browse to a CSV and page through it', async (t) => {
  const { svc, page, errors } = await startConsole(t);
  await seed(svc.workspace);
  await page.click('nav[aria-label="Sections"] >> text=Workspace');
  await page.click('.entries a:text-is("data/")');
  await page.waitForURL(/path=data/);
  await page.click('.entries a:has-text("measurements.csv")');
  await page.waitForSelector('table.data');
  const firstCells = () => page.$$eval('table.data tbody tr', (trs) => trs.map((tr) => tr.children[1]?.textContent));
  let ids = await firstCells();
  t.equal(ids.length, 100, 'a page of 100 rows');
  t.equal(ids[0], '1');
  t.match(await page.textContent('.pager .range'), /rows 1–100/);
  t.same(await page.$$eval('table.data thead th', (ths) => ths.map((th) => th.textContent)), ['#', 'id', 'sensor', 'temperature', 'ok']);
  t.ok(await page.isDisabled('button[aria-label="Previous rows"]'));

  await page.click('button[aria-label="Next rows"]');
  await page.waitForSelector('.pager .range:has-text("rows 101–200")');
  ids = await firstCells();
  t.equal(ids[0], '101', 'the next page starts at offset + rows returned');
  t.match(page.url(), /offset=100/, 'the place is kept in the URL');
  await screenshot(page, 'workspace');
  for (let i = 0; i < 3; i++) await Promise.all([page.waitForResponse(/preview_file/), page.click('button[aria-label="Next rows"]')]);
  await page.waitForSelector('.pager .range:has-text("rows 401–450")');
  t.ok(await page.isDisabled('button[aria-label="Next rows"]'), 'the last page has no next');
  await page.click('button[aria-label="Previous rows"]');
  await page.waitForSelector('.pager .range:has-text("rows 301–400")');
  t.same(errors, []);
});

t.test('Markdown renders with its frontmatter and without the file’s scripts; JSON and YAML are highlighted', async (t) => {
  const { svc, page, errors } = await startConsole(t);
  await seed(svc.workspace);
  await page.goto(`${svc.url}/#/workspace?path=notes&file=notes%2FREADME.md`);
  await page.waitForSelector('.markdown h1');
  t.equal(await page.textContent('.markdown h1'), 'Baseline run');
  t.match(await page.textContent('.frontmatter'), /"title": "Experiment notes"/);
  t.equal(await page.evaluate('window.pwned'), undefined, 'nothing from the file ran');
  t.equal(await page.locator('.markdown script, .markdown img').count(), 0, 'raw HTML is shown as text');
  t.equal(await page.locator('.markdown a[href^="javascript"]').count(), 0, 'javascript: links are dropped');
  t.equal(await page.locator('.markdown a[href="https://example.org"]').count(), 1);
  await screenshot(page, 'markdown');

  await page.goto(`${svc.url}/#/workspace?path=data&file=data%2Fconfig.json`);
  await page.waitForSelector('.code-json .tok-key');
  t.match(await page.textContent('.code-json'), /"layers": \[/);
  await page.goto(`${svc.url}/#/workspace?path=data&file=data%2Fparams.yaml`);
  await page.waitForSelector('.code-yaml .tok-comment');
  t.equal(await page.textContent('.code-yaml .tok-key'), 'lr');
  t.same(errors, []);
});
