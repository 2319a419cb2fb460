import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { PACKAGE_ROOT } from '../../core/build-info.js';
import { guideScript, runGuide } from '../helpers/guide-script.js';
import { startTestService } from '../helpers/service.js';

/**
 * docs/how-to/plugins.md promises that its `sh` blocks work as written: they are run here, in order, as
 * one bash script from a clean directory, with `taskyard` on PATH and a real service to install into.
 */
const { blocks, script } = guideScript(await readFile(join(PACKAGE_ROOT, 'docs', 'how-to', 'plugins.md'), 'utf8'));

t.test('every command of the plugin guide works from a clean directory', async (t) => {
  t.ok(blocks >= 5, 'the guide has its command blocks');
  const svc = await startTestService(t);
  const output = await runGuide(t, svc, script);
  t.equal(output.code, 0, output.text.slice(-4000));
  t.match(output.text, /word-tools#count-words#\S+ {2}succeeded/, 'task run ran the example Task');
  t.match(output.text, /# pass 1/, "the scaffold's own test passed");
  t.match(output.text, /"name": "word-tools"/, 'plugin install installed it');
  t.match(output.text, /INFO 5 words, most frequent: a, rose, is/, 'submit --follow printed its log');
  t.same((await svc.call('list_plugins')).body.answer, [], 'the guide ends by uninstalling it');
});
