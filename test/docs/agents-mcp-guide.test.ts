import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { PACKAGE_ROOT } from '../../core/build-info.js';
import { guideScript, runGuide } from '../helpers/guide-script.js';
import { startTestService } from '../helpers/service.js';

/**
 * docs/tutorials/agents-mcp.md promises that its `sh` blocks work as written: they run here, in
 * order, as one bash script from a clean directory, speaking MCP to a real service with curl.
 */
const { blocks, script } = guideScript(await readFile(join(PACKAGE_ROOT, 'docs', 'tutorials', 'agents-mcp.md'), 'utf8'));

t.test('every command of the agents-over-MCP tutorial works from a clean directory', async (t) => {
  t.ok(blocks >= 6, 'the tutorial has its command blocks');
  const svc = await startTestService(t);
  const output = await runGuide(t, svc, script);
  t.equal(output.code, 0, output.text.slice(-4000));
  const text = output.text;
  t.match(text, /taskyard runs work on this machine\. [^\n]*await_task/, 'step 1: initialize answered the instructions');
  t.match(text, /\bversion list_machines machine_status\b[^\n]*\bshell\b[^\n]*\bawait_task\b/, 'step 1: tools/list named the tools');
  t.match(text, /\{'task_id': 'base#sleep#agent-nap', 'run_id': '\w+', 'task': 'sleep'\}/, 'step 2: submit answered the handle');
  t.match(text, /^succeeded done: True$/m, 'step 2: await_task answered the finished run');
  t.match(text, /INFO step 2\/2\n/, 'step 2: read_task_log read the log');
  t.match(text, /^deleted: base#sleep#agent-nap$/m, 'step 4: the tutorial deletes its Task');
  t.same((await svc.call('list_task_ids')).body.answer, [], 'nothing left');
});
