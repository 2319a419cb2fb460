import t from 'tap';
import { makeWorkspace, startTaskService, submitOk, waitTask, writeFixturePlugin } from './task-helpers.js';

/**
 * Every byte a Task writes lands in task.log once, in order, whichever channel wrote it: the
 * logger, console.log (stdout), console.error (stderr) and a child process that inherits both.
 * A pooled runner's stdout and stderr once wrote at their own offset from the start of the file
 * (the slot log was opened for writing, not appending) and overwrote the logger's lines.
 */
const CHANNEL_TASKS = `
import { execSync } from 'node:child_process';
import { defineTask, TaskError } from 'taskyard/task';

export default [
  defineTask({
    name: 'log-channels',
    taskType: 'channels',
    description: 'Logs five lines, then writes through console.log, console.error and a child; fails on request.',
    input: { type: 'object', properties: { fail: { type: 'boolean', default: false } } },
    output: { type: 'object', properties: {} },
    async run(input, ctx) {
      for (let i = 1; i <= 5; i++) ctx.logger.info('epoch ' + i);
      console.log('console-out');
      console.error('console-err');
      execSync('echo child-out; echo child-err >&2', { stdio: 'inherit' });
      ctx.logger.info('after the child');
      if (input.fail) throw new TaskError('RuntimeError', 'failing on request');
      return {};
    },
  }),
];
`;

const EXPECTED = ['INFO epoch 1', 'INFO epoch 2', 'INFO epoch 3', 'INFO epoch 4', 'INFO epoch 5', 'console-out', 'console-err', 'child-out', 'child-err', 'INFO after the child'];

/** The log's lines without the logger's timestamps. */
function linesOf(content: string): string[] {
  return content.split('\n').filter((line) => line !== '').map((line) => line.replace(/^\d{4}-\d\d-\d\dT\S+ /, ''));
}

for (const poolSize of [2, 0]) {
  t.test(`runner_pool_size ${poolSize}: task.log holds the logger, stdout, stderr and a child's output once, in order; a failed Task keeps them too`, async (t) => {
    const workspace = await makeWorkspace(t);
    await writeFixturePlugin(workspace, { name: 'taskyard-channels', tasks: CHANNEL_TASKS });
    const svc = await startTaskService(t, { workspace, config: { service: { runner_pool_size: poolSize } } });
    // Several runs: with a pool, the later ones go to runners started ahead of need.
    for (const fail of [false, true, false]) {
      const handle = await submitOk(t, svc, { task: 'log-channels', fail });
      const done = await waitTask(svc, handle);
      t.equal(done.status.state, fail ? 'failed' : 'succeeded', `the run ${fail ? 'fails' : 'succeeds'}`);
      const log = (await svc.call('read_task_log', { task_id: handle.task_id, limit: 65536 })).body.answer;
      const lines = linesOf(log.content);
      t.same(lines.slice(0, EXPECTED.length), EXPECTED, 'every line, once, in the order written');
      if (fail) {
        t.match(lines.slice(EXPECTED.length).join('\n'), /RuntimeError: failing on request/, 'the failure follows the earlier lines');
      } else {
        t.equal(lines.length, EXPECTED.length, 'nothing else');
      }
    }
  });
}
