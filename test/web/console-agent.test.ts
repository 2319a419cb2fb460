import t from 'tap';
import { screenshot, startConsole, waitFor } from '../helpers/browser.js';
import { startModelServer } from '../helpers/model-server.js';

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
  // The redraw empties the transcript, then fills it from the stored session once that is read:
  // wait for the text rather than read the transcript at one instant (it was empty under load).
  await page.waitForSelector('.transcript .block-text >> text=There are no');
  t.match(await page.textContent('.transcript'), /There are no/, 'what was said before Stop is kept');

  model.reply({ items: [{ text: 'Second answer.' }] });
  await page.fill('textarea[name=message]', 'And now?');
  await page.press('textarea[name=message]', 'Control+Enter');
  await page.waitForSelector('.block-text.role-assistant >> text=Second answer.');
  await page.waitForSelector('.composer button.danger:disabled');

  await page.fill('input[name=title]', 'Task check');
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
