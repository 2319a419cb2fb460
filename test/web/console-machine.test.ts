import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { screenshot, startConsole } from '../helpers/browser.js';
import { startTestService } from '../helpers/service.js';

t.test('Machine page: figures, targets with health, and a target selector that sends calls there', async (t) => {
  const remote = await startTestService(t, { token: 'remote-token-0123456789' });
  await writeFile(join(remote.workspace, 'only-on-remote.txt'), 'hello from the target\n');
  const { svc, page, errors } = await startConsole(t, {
    config: { targets: [{ address: remote.url, token: 'remote-token-0123456789' }, { address: 'http://127.0.0.1:9', token: 'x' }] },
  });
  await page.click('nav[aria-label="Sections"] >> text=Machine');
  await page.waitForSelector('section[aria-label="CPU"] .big');
  t.match(await page.textContent('section[aria-label="Service"]'), /version\s*0\.\d+\.\d+/);
  t.match(await page.textContent('section[aria-label="Memory"]'), /total\s*[\d.]+ GiB/);
  await page.waitForSelector('table.grid:has-text("unreachable")');
  const health = await page.$$eval('section:has(h2:text("Targets")) tbody tr', (trs) => trs.map((tr) => [tr.children[0]?.textContent, tr.children[1]?.textContent]));
  t.same(health, [[remote.url, 'healthy'], ['http://127.0.0.1:9', 'unreachable']], 'each target with its health');
  await screenshot(page, 'machine');

  await page.selectOption('#target', remote.url);
  await page.waitForSelector(`.page-head :text("figures of ${remote.url}")`);
  await page.click('nav[aria-label="Sections"] >> text=Workspace');
  await page.waitForSelector('.entries a:has-text("only-on-remote.txt")');
  t.pass('the workspace shown is the target’s');
  await page.click('.entries a:has-text("only-on-remote.txt")');
  await page.waitForSelector('pre.text');
  t.equal(await page.textContent('pre.text'), 'hello from the target\n');

  await page.selectOption('#target', '');
  await page.waitForSelector('.listing .notice-empty');
  t.equal(await page.locator('.entries a:has-text("only-on-remote.txt")').count(), 0, 'back on this service, at the workspace root');
  t.notMatch(page.url(), /only-on-remote/, 'a path of the other machine is not kept');
  t.ok(svc.url !== remote.url);
  t.same(errors, []);
});
