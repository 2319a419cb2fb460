import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { PACKAGE_ROOT } from '../../core/build-info.js';
import { guideScript, runGuide } from '../helpers/guide-script.js';
import { startTestService } from '../helpers/service.js';

/**
 * docs/tutorials/python-script.md ("Your Python script as a Task") promises that its blocks work as written:
 * its `sh` blocks and the files it has the reader save (`python train.py`) run here, in order, as
 * one bash script from a clean directory, with `taskyard` on PATH, the real python3 and a real
 * service (with a token: the `command` Task is offered only then).
 */
const { blocks, script } = guideScript(await readFile(join(PACKAGE_ROOT, 'docs', 'tutorials', 'python-script.md'), 'utf8'));

t.test('every block of the Python tutorial works from a clean directory', async (t) => {
  t.ok(blocks >= 8, 'the tutorial has its blocks');
  const svc = await startTestService(t);
  const output = await runGuide(t, svc, script);
  t.equal(output.code, 0, output.text.slice(-4000));
  const text = output.text;
  t.match(text, /task command#command#first-fit {2}\(run \w+\)\n[\s\S]*epoch 5\/5: loss [\d.]+\n[\s\S]*command#command#first-fit {2}succeeded/, 'step 1: taskyard run ran the script as a Task and followed it');
  t.match(text, /epoch 5\/5: loss [\d.]+\n[\s\S]*epoch 5\/5: loss [\d.]+\n/, 'step 1: the plain script ran as a command Task (curl submit, logs --follow)');
  t.match(text, /command#command#\S+ {2}succeeded in [\d.]+ s\nresult: \{"exit_code":0\}/, 'step 1: its status');
  t.match(text, /command#command#fit-1 {2}succeeded[^\n]*\nresult: \{"final_loss":[\d.]+,"exit_code":0\}\nartifact model: model\.json/, 'step 2: output and artifact');
  t.match(text, /\{"name":"loss","value":[\d.]+,"step":2,"timestamp":/, 'step 2: its metrics');
  t.match(text, /\[taskyard\] \{"type":"output","values":\{"final_loss":[\d.]+\}\}/, 'step 3: the scaffold runs by hand');
  t.match(text, /toy-fit#train#\S+ {2}succeeded/, 'step 3: task run');
  t.match(text, /"name": "toy-fit"/, 'step 3: installed');
  t.match(text, /toy-fit#train#tuned {2}succeeded[^\n]*\nresult: \{"final_loss":[\d.]+\}/, 'step 3: typed submit');
  t.match(text, /ValidationError: invalid input for task train: epochs: must be >= 1[\s\S]*refused: nothing started/, 'step 3: a bad input is refused');
  t.same((await svc.call('list_plugins')).body.answer, [], 'the tutorial ends by uninstalling it');
});
