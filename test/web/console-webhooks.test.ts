import t from 'tap';
import { startConsole, waitFor } from '../helpers/browser.js';
import { submitOk, waitTask } from '../tasks/task-helpers.js';
import { closedPort, startReceiver } from '../webhooks/receiver.js';

const SECRET = 'console-secret-0123456789';

t.test('Machine page: a Webhooks card per endpoint, URL without credentials, pending, last delivery and last error; no secret', async (t) => {
  const receiver = await startReceiver(t);
  const down = await closedPort();
  const withCredentials = receiver.url.replace('http://', 'http://hookuser:hookpass@');
  const { svc, page, errors } = await startConsole(t, {
    config: {
      webhooks: [
        { url: withCredentials, events: ['task.succeeded'], secret: SECRET },
        { url: `http://127.0.0.1:${down}/down`, events: ['task.succeeded'], secret: SECRET },
      ],
    },
  });
  await waitTask(svc, await submitOk(t, svc, { task: 'demo', x: 1, y: 2 }));
  await waitFor(() => receiver.accepted.size === 1, 15_000, 'the delivery');
  await page.click('nav[aria-label="Sections"] >> text=Machine');
  const rows = 'section[aria-label="Webhooks"] tbody tr';
  const read = () => page.$$eval(rows, (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent ?? '')));
  // The card refreshes every few seconds: wait until it shows the delivery and the refused attempt.
  await waitFor(async () => { const r = await read(); return r.length === 2 && r[0]![5] !== '—' && r[1]![6] !== '—'; }, 20_000, 'the card to show both endpoints').catch(() => undefined);
  const table = await read();
  t.equal(table.length, 2, 'one row per endpoint');
  t.equal(table[0]![0], receiver.url, 'the URL without its credentials');
  t.same([table[0]![2], table[0]![3]], ['0', '1'], 'nothing pending, one delivered');
  t.match(table[0]![5], /^\d{4}-\d\d-\d\dT/, 'last delivery');
  t.equal(table[1]![2], '1', 'the delivery to the closed port is pending');
  t.match(table[1]![6], /ECONNREFUSED/, 'with its last error');
  const card = (await page.textContent('section[aria-label="Webhooks"]')) ?? '';
  t.notMatch(card, /hookpass|console-secret/, 'no credentials, no secret');
  t.same(errors, []);
});
