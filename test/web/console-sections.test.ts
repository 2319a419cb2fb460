import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { screenshot, startConsole, waitFor } from '../helpers/browser.js';
import { startModelServer } from '../../harness/model-server.js';
import { startTestService } from '../helpers/service.js';

// One service for the tests that need none of their own (each still gets its own browser context).
const shared = await startTestService(t);

t.test('Jobs page: the catalog, a form from the schema, a JobResponse and a live SSE view', async (t) => {
  const { svc, page, errors } = await startConsole(t, { service: shared });
  await page.click('nav[aria-label="Sections"] >> text=Jobs');
  await page.waitForSelector('.job-list a code');
  const names = await page.$$eval('.job-list a code', (els) => els.map((e) => e.textContent));
  const catalog = (await (await svc.fetch('/jobs')).json()) as { answer: { items: Array<{ name: string }> } };
  t.same(names, catalog.answer.items.map((j) => j.name), 'every public Job is listed, in catalog order');

  await page.click('.job-list a:has(code:text-is("version"))');
  await page.waitForSelector('#job-title:has-text("version")');
  t.match(await page.textContent('.schema-form'), /takes no arguments/);
  await page.click('.schema-form button[type=submit]');
  await page.waitForSelector('.response[data-success="true"]');
  const version = (await svc.call('version')).body.answer;
  t.equal((await page.textContent('.response .answer-text'))?.trim(), version, 'the answer is shown as returned');

  // submit's schema allows Task inputs beside `task`: the form offers a JSON box for them.
  await page.click('.job-list a:has(code:text-is("submit"))');
  await page.fill('[name=task]', 'demo');
  await page.fill('textarea[name="additional fields"]', '{"x": 2, "y": 3}');
  await page.click('text=Stream events');
  await page.waitForSelector('.response');
  t.ok((await page.locator('.raw-events .kind-progress').count()) > 0, 'the progress event arrived on the live view');
  t.match(await page.textContent('.response'), /"task_id": "base#demo#/, 'the final result carries the TaskHandle');
  await screenshot(page, 'jobs');

  // A schema violation shows the service's 422 details.
  await page.click('.job-list a:has(code:text-is("submit"))');
  await page.fill('[name=task]', 'demo');
  await page.fill('textarea[name="additional fields"]', '[1]');
  await page.click('.schema-form button[type=submit]');
  await page.waitForSelector('.notice-error');
  t.match(await page.textContent('.notice-error'), /Additional fields: must be a JSON object/);
  t.same(errors, []);
});

t.test('a business failure is shown as the service worded it', async (t) => {
  const { page } = await startConsole(t, { service: shared });
  await page.click('nav[aria-label="Sections"] >> text=Jobs');
  await page.click('.job-list a:has(code:text-is("get_task_definition"))');
  await page.fill('[name=task]', 'no-such-task');
  await page.click('.schema-form button[type=submit]');
  await page.waitForSelector('.response[data-success="false"]');
  t.match(await page.textContent('.response .answer-text'), /^ValueError: .*demo/s);
});

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
  // The targets are checked again every few seconds: a check of the remote that timed out on a
  // loaded machine shows `unreachable` until the next one. Wait for the table to settle, bounded.
  const expected = [[remote.url, 'healthy'], ['http://127.0.0.1:9', 'unreachable']];
  const rows = 'section:has(h2:text("Targets")) tbody tr';
  const readHealth = () => page.$$eval(rows, (trs) => trs.map((tr) => [tr.children[0]?.textContent, tr.children[1]?.textContent]));
  await page.waitForSelector('table.grid:has-text("unreachable")');
  await waitFor(async () => JSON.stringify(await readHealth()) === JSON.stringify(expected), 20_000, 'the targets table to show each target with its health').catch(() => undefined);
  t.same(await readHealth(), expected, 'each target with its health');
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

t.test('Agent page: streamed blocks, folded thinking, tool calls with their Job and answer, Stop, rename/tag/fork/delete', async (t) => {
  const model = await startModelServer(t);
  const { svc, page, errors } = await startConsole(t, { config: { agent: { backend: 'openai', base_url: model.baseUrl, model: 'scripted-model', max_retries: 0 } } });
  await page.click('nav[aria-label="Sections"] >> text=Agent');
  await page.waitForSelector('.session-list >> text=No sessions yet.');

  model.reply(
    { items: [{ reasoning: 'Let me list the Tasks first.' }, { tool: 'list_task_statuses', input: {} }] },
    { items: [{ text: 'There are no Tasks at the moment, nothing runs.' }], holdAfter: 6 },
  );
  await page.fill('textarea[name=message]', 'What is running?');
  await page.click('.composer button[type=submit]');
  await page.waitForSelector('.block-thinking[data-done=true]');
  t.equal(await page.getAttribute('.block-thinking', 'open'), null, 'thinking is folded away');
  t.equal((await page.textContent('.block-thinking .block-body'))?.trim(), 'Let me list the Tasks first.');
  await page.waitForSelector('.block-tool[data-state=ok]');
  t.match(await page.textContent('.block-tool summary'), /Job list_task_statuses ok/);
  t.match(await page.textContent('.block-tool .tool-answer'), /\[\]/, 'the Job\'s answer is shown');
  await waitFor(() => model.holding, 10_000, 'the model to hold its stream');
  await page.waitForSelector('.block-text.role-assistant >> text=There are no');
  t.equal(await page.isEnabled('.composer button.danger'), true, 'Stop is offered while the turn runs');
  await screenshot(page, 'agent');

  await page.click('.composer button.danger');
  await page.waitForSelector('.block-system >> text=cancelled');
  t.equal(model.abandoned, 1, 'Stop aborted the model stream');
  t.match(page.url(), /#\/agent\/s-\w+$/, 'the new session is in the address');
  const sessionId = /#\/agent\/(s-\w+)$/.exec(page.url())![1]!;
  await page.waitForSelector(`.session-list a[data-session="${sessionId}"] >> text=What is running?`);
  // Once the turn ended the page redraws the session from what was stored.
  await page.waitForSelector('.session-head h2 >> text=What is running?');
  await page.waitForSelector('.block-system[data-done=true]');
  // The redraw replaces the transcript with the stored session at once, never emptying it first.
  await page.waitForSelector('.transcript .block-text >> text=There are no');
  t.match(await page.textContent('.transcript'), /There are no/, 'what was said before Stop is kept');

  // The turn's end redraws the session from the store; that read is held here until a rename is
  // being typed, so the redraw comes after the typing, which it must keep.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route('**/jobs/get_agent_session', async (route) => {
    await held;
    await route.continue();
  });
  model.reply({ items: [{ text: 'Second answer.' }] });
  await page.fill('textarea[name=message]', 'And now?');
  await page.press('textarea[name=message]', 'Control+Enter');
  await page.waitForSelector('.block-text.role-assistant >> text=Second answer.');
  await page.waitForSelector('.composer button.danger:disabled');

  await page.fill('input[name=title]', 'Task check');
  await page.evaluate("document.querySelector('input[name=title]').setAttribute('data-typed', '')");
  release();
  await page.waitForSelector('.session-actions input[name=title]:not([data-typed])');
  t.equal(await page.inputValue('input[name=title]'), 'Task check', 'the redraw at the turn\'s end kept the rename being typed');
  await page.unroute('**/jobs/get_agent_session');
  await page.click('.session-actions >> text=Rename');
  await page.waitForSelector(`.session-list a[data-session="${sessionId}"] >> text=Task check`);
  await page.fill('input[name=tag]', 'ops');
  await page.click('.session-actions >> text=Set tag');
  await page.waitForSelector(`.session-list a[data-session="${sessionId}"] .tag >> text=ops`);
  t.match((await svc.call('get_agent_session', { session_id: sessionId })).body.answer, { title: 'Task check', tag: 'ops' });

  await page.click('.session-actions >> text=Fork');
  await page.waitForSelector('.session-head h2 >> text=Task check (fork)');
  const forkId = /#\/agent\/(s-\w+)$/.exec(page.url())![1]!;
  t.not(forkId, sessionId);
  t.match(await page.textContent('.transcript'), /Second answer\./, 'the fork shows the copied conversation');

  page.once('dialog', (d) => void d.accept());
  await page.click('.session-actions >> text=Delete');
  await page.waitForSelector('.session-head h2 >> text=New chat');
  await page.waitForSelector(`.session-list a[data-session="${sessionId}"]`);
  // The list is read again after the delete: wait (bounded) for the fork to leave it.
  await page.waitForSelector(`.session-list a[data-session="${forkId}"]`, { state: 'detached', timeout: 10_000 });
  t.equal(await page.locator(`.session-list a[data-session="${forkId}"]`).count(), 0, 'the deleted fork left the list');
  t.match((await svc.call('get_agent_session', { session_id: forkId })).body, { success: false, answer: /^KeyError/ });
  t.same(errors, []);
});
