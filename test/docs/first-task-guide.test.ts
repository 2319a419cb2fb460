import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { PACKAGE_ROOT } from '../../core/build-info.js';
import { guideScript, runGuide } from '../helpers/guide-script.js';
import { startTestService } from '../helpers/service.js';

/**
 * docs/tutorials/first-task.md promises that its `sh` blocks work as written: they run here, in
 * order, as one bash script from a clean directory, with `taskyard` on PATH, `curl`, and a real
 * service whose URL and token are in TASKYARD_URL and TASKYARD_TOKEN as the page has the reader set.
 */
const { blocks, script } = guideScript(await readFile(join(PACKAGE_ROOT, 'docs', 'tutorials', 'first-task.md'), 'utf8'));

t.test('every command of the first-Task tutorial works from a clean directory', async (t) => {
  t.ok(blocks >= 8, 'the tutorial has its command blocks');
  const svc = await startTestService(t);
  const output = await runGuide(t, svc, script);
  t.equal(output.code, 0, output.text.slice(-4000));
  const text = output.text;
  t.match(text, /"answer": "\d+\.\d+\.\d+"/, 'step 1: the CLI called version');
  t.match(text, /\{"answer":"\d+\.\d+\.\d+","success":true,"metadata":\{"version":/, 'step 1: curl called version');
  t.match(text, /NAME +TYPE +SOURCE +DESCRIPTION\n[\s\S]*demo +base/, 'step 2: the Task definitions as a table');
  t.match(text, /base#demo#first-run {2}succeeded in [\d.]+ s\nresult: \{"result":5,/, 'step 2: the demo Task succeeded with 5');
  t.match(text, /INFO demo: result=5/, 'step 2: its log');
  t.match(text, /INFO step 4\/4[\s\S]*base#sleep#nap {2}succeeded/, 'step 3: --follow printed the log and the outcome');
  t.match(text, / +1 event: result\n/, 'step 3: the SSE stream ended with one result');
  t.match(text, / +\d+ event: progress\n/, 'step 3: and carried progress');
  t.ok(text.includes(`${svc.url}/#token=${svc.token}`), 'step 4: the console URL');
  t.same((await svc.call('list_task_ids')).body.answer, [], 'step 5: the tutorial deletes its Tasks');
});
