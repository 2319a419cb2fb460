import t from 'tap';
import { screenshot, startConsole } from '../helpers/browser.js';

t.test('the console URL carries the token once: kept for the session, removed from the address bar', async (t) => {
  const { page, errors } = await startConsole(t);
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
  const { svc, page, errors } = await startConsole(t, { open: false });
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
  const { svc, page, errors } = await startConsole(t, { open: false });
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
  const { svc, page } = await startConsole(t, { open: false });
  await page.goto(`${svc.url}/`);
  await page.waitForSelector('form.login');
  t.equal(await page.textContent('#login-error'), '');
});

t.test('signing out forgets the token', async (t) => {
  const { page } = await startConsole(t);
  await page.click('text=Sign out');
  await page.waitForSelector('form.login');
  t.equal(await page.evaluate('sessionStorage.getItem("taskyard.token")'), null);
});
