import { mkdir, readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import t from 'tap';
import { screenshot, startConsole, waitFor } from '../helpers/browser.js';
import { startTestService } from '../helpers/service.js';
import { makeWorkspace, writeFixturePlugin } from '../tasks/task-helpers.js';

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

// One service for the file, seeded once: each test reads files of its own folders (data/, notes/,
// plots/) in a browser context of its own.
const shared = await startTestService(t);
await seed(shared.workspace);

t.test('browse to a CSV and page through it', async (t) => {
  const { page, errors } = await startConsole(t, { service: shared });
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
  await page.waitForSelector('.preview-head .row-count:text-is("450 rows")');
  t.pass('the header shows the row count of the whole file (count_csv_rows)');

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

t.test('the row count of a CSV keeps quoted line breaks inside their row', async (t) => {
  const { svc, page, errors } = await startConsole(t, { service: shared });
  await writeFile(join(svc.workspace, 'data', 'quoted.csv'), 'id,text\n1,"two\nlines"\n2,"and\n\nthree"\n');
  await page.goto(`${svc.url}/#/workspace?path=data&file=data%2Fquoted.csv`);
  await page.waitForSelector('table.data');
  await page.waitForSelector('.preview-head .row-count:text-is("2 rows")');
  t.equal(await page.$$eval('table.data tbody tr', (trs) => trs.length), 2, 'as many rows as the table shows');
  t.same(errors, []);
});

t.test('Markdown renders with its frontmatter and without the file’s scripts; JSON and YAML are highlighted', async (t) => {
  const { svc, page, errors } = await startConsole(t, { service: shared });
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

// Tiny real images: a 1x1 png, gif and webp, a 3x2 jpeg-free set is enough to see each decode.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const WEBP = Buffer.from('UklGRiQAAABXRUJQVlA4IBgAAAAwAQCdASoBAAEAAwA0JaQAA3AA/vuUAAA=', 'base64');
/** An svg that would run script if it were ever rendered as a document. */
const EVIL_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="240" height="140" onload="window.pwned=1"><script>window.pwned=2</script>' +
  '<rect width="240" height="140" fill="#f4f7fb"/><polyline points="10,130 50,90 90,100 130,50 170,60 230,15" fill="none" stroke="teal" stroke-width="3"/></svg>';

async function seedImages(workspace: string): Promise<void> {
  await mkdir(join(workspace, 'plots'), { recursive: true });
  await writeFile(join(workspace, 'plots', 'chart.png'), PNG);
  await writeFile(join(workspace, 'plots', 'anim.gif'), GIF);
  await writeFile(join(workspace, 'plots', 'photo.webp'), WEBP);
  await writeFile(join(workspace, 'plots', 'evil.svg'), EVIL_SVG);
  await writeFile(join(workspace, 'plots', 'table.csv'), 'a,b\n1,2\n');
  // Sparse files: big by size, cheap on disk.
  await writeFile(join(workspace, 'plots', 'huge.bin'), '');
  await truncate(join(workspace, 'plots', 'huge.bin'), 150 * 1024 * 1024);
  await writeFile(join(workspace, 'plots', 'huge.png'), '');
  await truncate(join(workspace, 'plots', 'huge.png'), 9 * 1024 * 1024);
}

const PLOT_PLUGIN = `
import { writeFileSync } from 'node:fs';
import { defineTask } from 'taskyard/task';

export default [
  defineTask({
    name: 'plot',
    taskType: 'fixture',
    description: 'Draws two plots and registers them as artifacts.',
    input: { type: 'object', properties: {} },
    output: { type: 'object', properties: {} },
    async run(input, ctx) {
      writeFileSync('curve.svg', ${JSON.stringify(EVIL_SVG)});
      writeFileSync('dot.png', Buffer.from(${JSON.stringify(PNG.toString('base64'))}, 'base64'));
      writeFileSync('numbers.txt', '1 2 3\\n');
      await ctx.artifact('curve', 'curve.svg');
      await ctx.artifact('dot', 'dot.png');
      await ctx.artifact('numbers', 'numbers.txt');
      return {};
    },
  }),
];
`;

/** Waits until the images under `selector` are decoded; answers their alt texts and natural widths. */
async function drawnImages(page: Page, selector: string, count: number): Promise<Array<[string, number]>> {
  return waitFor(async () => {
    const images = await page.$$eval(selector, (els) => els.map((e) => e as unknown as { alt: string; complete: boolean; naturalWidth: number }).map((i): [string, number, boolean] => [i.alt, i.naturalWidth, i.complete && i.naturalWidth > 0]));
    return images.length === count && images.every((i) => i[2]) ? images.map(([alt, width]): [string, number] => [alt, width]) : null;
  }, 30_000, `${count} decoded images at ${selector}`);
}

t.test('workspace browser: images shown through the download route, svg inert; download buttons; big files announced', async (t) => {
  const { svc, page, errors } = await startConsole(t, { service: shared });
  await seedImages(svc.workspace);
  const fileRequests: string[] = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname === '/files') fileRequests.push(new URL(r.url()).searchParams.get('path') ?? '');
  });

  await page.goto(`${svc.url}/#/workspace?path=plots&file=plots%2Fevil.svg`);
  t.same(await drawnImages(page, '.image-preview img', 1), [['evil.svg', 240]], 'the svg is drawn');
  t.match(await page.getAttribute('.image-preview img', 'src'), /^blob:/, 'fetched with the token, shown from a blob');
  t.equal(await page.evaluate('window.pwned'), undefined, 'no script of the svg ran');
  t.ok(fileRequests.includes('plots/evil.svg'), 'through GET /files');
  await screenshot(page, 'workspace-image');
  for (const name of ['chart.png', 'anim.gif', 'photo.webp']) {
    await page.goto(`${svc.url}/#/workspace?path=plots&file=plots%2F${name}`);
    await page.waitForSelector(`.image-preview img[alt="${name}"]`);
    t.same(await drawnImages(page, '.image-preview img', 1), [[name, 1]], `${name} is drawn`);
  }
  t.equal(await page.locator('.entries tr:has-text("chart.png") .kind-tag').textContent(), 'image', 'the listing calls an image an image, not unsupported');

  // The preview's own download button saves the file as it is.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('.preview-head button.download')]);
  t.equal(download.suggestedFilename(), 'photo.webp');
  t.ok((await readFile((await download.path())!)).equals(WEBP), 'the saved bytes are the file');
  // And every file row has one.
  const [rowDownload] = await Promise.all([page.waitForEvent('download'), page.click('.entries tr:has-text("table.csv") button.download')]);
  t.equal(rowDownload.suggestedFilename(), 'table.csv');
  t.equal(await readFile((await rowDownload.path())!, 'utf8'), 'a,b\n1,2\n');

  // A big file is announced with its size and not fetched when declined.
  const before = fileRequests.length;
  let asked = '';
  page.once('dialog', (d) => {
    asked = d.message();
    void d.dismiss();
  });
  await page.click('.entries tr:has-text("huge.bin") button.download');
  t.equal(asked, 'huge.bin is 150 MiB. Download it?');
  await page.goto(`${svc.url}/#/workspace?path=plots&file=plots%2Fhuge.png`);
  await page.waitForSelector('.image-preview .big-file');
  t.match(await page.textContent('.image-preview'), /A large image: 9\.0 MiB/);
  t.equal(fileRequests.length, before, 'neither big file was fetched');
  await page.click('.image-preview button:has-text("Show image (9.0 MiB)")');
  await page.waitForSelector('.image-preview .notice-error');
  t.equal(fileRequests.at(-1), 'plots/huge.png', 'fetched once asked for (and, not being an image, said so)');
  t.same(errors.filter((e) => !/huge\.png|blob:/.test(e)), []);
});

t.test('Task artifacts: download buttons, image artifacts drawn, svg inert', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace, { name: 'taskyard-plot', tasks: PLOT_PLUGIN });
  const { svc, page, errors } = await startConsole(t, { workspace });
  const submitted = await svc.call('submit', { task: 'plot', task_name: 'plots' });
  t.equal(submitted.body.success, true, JSON.stringify(submitted.body.answer));
  const handle = submitted.body.answer;
  t.equal((await svc.call('wait_task', { task_id: handle.task_id, run_id: handle.run_id })).body.answer.state, 'succeeded');

  await page.goto(`${svc.url}/#/tasks/${encodeURIComponent(handle.task_id)}`);
  await page.waitForSelector('section[aria-label="Artifacts"] tr[data-artifact="numbers"] button.download');
  t.equal(await page.locator('section[aria-label="Artifacts"] button.download').count(), 3, 'one button per artifact');
  t.same(await drawnImages(page, '.artifact-images img', 2), [['curve.svg', 240], ['dot.png', 1]]);
  t.same(await page.$$eval('.artifact-images figcaption', (els) => els.map((e) => e.textContent)), ['curve', 'dot'], 'only the images are drawn');
  t.equal(await page.evaluate('window.pwned'), undefined, 'the svg artifact ran no script');
  await screenshot(page, 'task-artifacts', { fullPage: true });

  const [download] = await Promise.all([page.waitForEvent('download'), page.click('tr[data-artifact="numbers"] button.download')]);
  t.equal(download.suggestedFilename(), 'numbers.txt');
  t.equal(await readFile((await download.path())!, 'utf8'), '1 2 3\n');
  t.same(errors, []);
});
