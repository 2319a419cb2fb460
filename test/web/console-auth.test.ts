import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { AuditRecord } from '../../core/audit.js';
import { screenshot, startConsole, waitFor } from '../helpers/browser.js';
import { startTestService } from '../helpers/service.js';

// One service for the tests that need none of their own (each still gets its own browser context).
const shared = await startTestService(t);

t.test('the console URL carries the token once: kept for the session, removed from the address bar', async (t) => {
  const { page, errors } = await startConsole(t, { service: shared });
  t.notMatch(page.url(), /token/, 'the token is gone from the URL after load');
  t.equal(await page.evaluate('sessionStorage.getItem("taskyard.token")'), 'test-token-0123456789');
  await page.waitForSelector('.vtable');
  t.equal(await page.textContent('nav[aria-label="Sections"] a[aria-current="page"]'), 'Tasks', 'the console lands on Tasks');
  await page.reload();
  await page.waitForSelector('.vtable');
  t.pass('a reload keeps working from sessionStorage');
  t.same(errors, []);
});

t.test('a wrong token is rejected with the service’s words, then a right one gets in', async (t) => {
  const { svc, page, errors } = await startConsole(t, { service: shared, open: false, isolated: true });
  await page.goto(`${svc.url}/#token=not-the-token`);
  await page.waitForSelector('#login-error:not(:empty)');
  t.equal(await page.textContent('#login-error'), 'Invalid bearer token');
  t.notMatch(page.url(), /not-the-token/);
  t.equal(await page.evaluate('sessionStorage.getItem("taskyard.token")'), null, 'a rejected token is not kept');
  await page.fill('#token', 'still-wrong');
  await page.click('form.login button[type=submit]');
  // A selector, not a string predicate: polling a string evaluates it, which the console's CSP
  // (script-src 'self') refuses whenever the first check does not already hold.
  await page.waitForSelector('form.login button[type=submit]:not([disabled])');
  t.equal(await page.inputValue('#token'), 'still-wrong');
  t.equal(await page.textContent('#login-error'), 'Invalid bearer token', 'the form keeps what was typed and shows the error');
  await screenshot(page, 'login');
  await page.fill('#token', svc.token!);
  await page.click('form.login button[type=submit]');
  await page.waitForSelector('.topbar');
  t.pass('the right token opens the console');
  t.same(errors, []);
});

t.test('a console link pasted into the same tab after a wrong token is taken and cleared', async (t) => {
  const { svc, page, errors } = await startConsole(t, { service: shared, open: false, isolated: true });
  await page.goto(`${svc.url}/#token=not-the-token`);
  await page.waitForSelector('#login-error:not(:empty)');
  // Same tab, same document: only the hash changes, as when a link is pasted into the address bar.
  await page.evaluate(`location.hash = '#token=${encodeURIComponent(svc.token!)}'`);
  await page.waitForSelector('.topbar');
  t.notMatch(page.url(), /token/, 'the real token left the address bar');
  t.equal(await page.evaluate('sessionStorage.getItem("taskyard.token")'), svc.token);
  await page.evaluate(`location.hash = '#token=wrong-again'`);
  await page.waitForSelector('#login-error:has-text("Invalid bearer token")');
  t.notMatch(page.url(), /wrong-again/);
  t.same(errors, []);
});

t.test('without any token the page asks for one, without an error', async (t) => {
  const { svc, page } = await startConsole(t, { service: shared, open: false, isolated: true });
  await page.goto(`${svc.url}/`);
  await page.waitForSelector('form.login');
  t.equal(await page.textContent('#login-error'), '');
});

t.test('signing out forgets the token', async (t) => {
  const { page } = await startConsole(t, { service: shared });
  await page.click('text=Sign out');
  await page.waitForSelector('form.login');
  t.equal(await page.evaluate('sessionStorage.getItem("taskyard.token")'), null);
});

const AGENT = 'agent-token-0123456789abcdef';
const AGENT_JOBS = ['submit', 'status', 'get_task_context', 'read_task_log', 'stream_task', 'query_task_statuses', 'list_installed_task_definitions', 'get_task_definition'];

t.test('the console shows what the signed-in token may do, hides the rest, and names who submitted a Task', async (t) => {
  const { svc, page, errors } = await startConsole(t, { open: false, isolated: true, config: { service: { tokens: [{ name: 'agent', token: AGENT, jobs: AGENT_JOBS }] } } });
  const res = await fetch(`${svc.url}/jobs/submit`, { method: 'POST', headers: { authorization: `Bearer ${AGENT}`, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { task: 'demo', x: 1, y: 2, task_name: 'by-agent' } }) });
  const taskId = ((await res.json()) as { answer: { task_id: string } }).answer.task_id;

  const refused: string[] = [];
  page.on('response', (r) => r.status() === 403 && refused.push(new URL(r.url()).pathname));
  await page.goto(`${svc.url}/#token=${encodeURIComponent(AGENT)}`);
  await page.waitForSelector('.topbar :text("Signed in as agent")');
  const sections = await page.locator('nav[aria-label="Sections"] a').allTextContents();
  t.same(sections, ['Tasks', 'Jobs'], 'sections whose Jobs the token may not call are hidden');

  await page.goto(`${svc.url}/#/tasks/${encodeURIComponent(taskId)}`);
  await page.waitForSelector('.page-head :text("submitted by agent")');
  await waitFor(async () => (await page.textContent('.page-head'))?.includes('succeeded'), 15_000, 'the Task page to show the finished run');
  t.equal(await page.locator('.page-head button:has-text("Cancel")').count(), 0, 'no Cancel for a token without cancel');
  t.equal(await page.locator('.page-head button:has-text("Delete")').count(), 0, 'no Delete for a token without delete_tasks');

  await page.goto(`${svc.url}/#/jobs`);
  await page.waitForSelector('.job-list li code');
  const jobs = await page.locator('.job-list li code').allTextContents();
  t.same(jobs.sort(), [...AGENT_JOBS].sort(), 'the Jobs page lists exactly its Jobs');

  const records = await waitFor(async () => {
    const text = await readFile(join(svc.workspace, '.taskyard', 'audit.jsonl'), 'utf8').catch(() => '');
    const parsed = text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as AuditRecord);
    return parsed.some((r) => r.transport === 'console' && r.job === 'get_task_context') ? parsed : null;
  }, 10_000, 'the console calls in the audit log');
  t.ok(records.every((r) => r.token === 'agent'), 'every call made by the agent token, by its name');
  t.ok(records.some((r) => r.transport === 'http' && r.job === 'submit'), 'the API submit as http');
  t.same(refused, [], 'the page calls nothing outside the scope');
  t.same(errors, []);
});
