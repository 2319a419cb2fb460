import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import t from 'tap';
import { isRunning, makeWorkspace, startTaskService, submitOk, waitState, writeFixturePlugin } from './task-helpers.js';
import { waitFor } from '../helpers/wait-for.js';
import { readProcess } from '../../workers/process-tree.js';

/**
 * Processes a Task started that left its process group and lost their parent (a `setsid` child of
 * a subshell that exited, a daemonising `nohup` launcher) are out of reach of the group kill and
 * of the /proc parent walk; cancel must end them too.
 */
const DETACHING_TASKS = `
import { execSync } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { defineTask } from 'taskyard/task';

export default [
  defineTask({
    name: 'detacher',
    taskType: 'detach',
    description: 'Starts two processes that leave its process group and parent chain, writes their pids, then waits.',
    input: { type: 'object', properties: {} },
    output: { type: 'object', properties: {} },
    async run(input, ctx) {
      execSync([
        '(setsid sleep 100 & echo $! > setsid.pid)',
        "setsid sh -c 'nohup sleep 100 >/dev/null 2>&1 & echo $! > nohup.pid'",
      ].join('\\n'), { stdio: 'inherit', shell: '/bin/sh' });
      ctx.logger.info('detached');
      await delay(300000);
      return {};
    },
  }),
  defineTask({
    name: 'leaver',
    taskType: 'detach',
    description: 'Starts a process that leaves its group and parent chain, writes its pid, and succeeds at once.',
    input: { type: 'object', properties: {} },
    output: { type: 'object', properties: {} },
    async run() {
      execSync('(setsid sleep 100 & echo $! > leaver.pid)', { stdio: 'inherit', shell: '/bin/sh' });
      return {};
    },
  }),
];
`;

/** A pid the Task wrote into its directory; rejects until the file is whole. */
async function pidIn(dir: string, name: string): Promise<number> {
  const text = (await readFile(join(dir, name), 'utf8')).trim();
  if (!/^\d+$/.test(text)) throw new Error(`${name} is not written yet`);
  return Number(text);
}

const CASES = [
  { poolSize: 2, end: 'cancel' },
  { poolSize: 0, end: 'cancel' },
  { poolSize: 2, end: 'time limit' },
] as const;

for (const { poolSize, end } of CASES) {
  t.test(`runner_pool_size ${poolSize}: ${end === 'cancel' ? 'cancel' : 'the time limit'} ends the processes a Task detached with setsid and a nohup launcher`, async (t) => {
    const workspace = await makeWorkspace(t);
    await writeFixturePlugin(workspace, { name: 'taskyard-detach', tasks: DETACHING_TASKS });
    const limit = end === 'time limit' ? { tasks: { detacher: { resources: { time_limit_s: 4 } } } } : {};
    const svc = await startTaskService(t, { workspace, config: { service: { runner_pool_size: poolSize, cancel_grace_ms: 500 }, ...limit } });
    const handle = await submitOk(t, svc, { task: 'detacher' });
    const running = await waitState(svc, handle.task_id, 'running');
    const dir = join(workspace, dirname(running.log_path));
    const pids = await waitFor(() => Promise.all([pidIn(dir, 'setsid.pid'), pidIn(dir, 'nohup.pid')]).catch(() => null), 15_000, 'the detached pids');
    t.teardown(() => pids.forEach((pid) => { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }));
    t.same(await Promise.all(pids.map(isRunning)), [true, true], 'both detached processes run');
    // `$!` is written as the child is forked, before it has called setsid: under load the test can
    // read /proc between the two. Wait (bounded) for both to have left the group.
    await waitFor(async () => (await Promise.all(pids.map(readProcess))).every((e) => e !== undefined && e.pgid !== running.pid), 10_000, 'the detached processes to leave the run\'s process group');
    for (const pid of pids) {
      const entry = await readProcess(pid);
      t.not(entry?.pgid, running.pid, `${pid} left the run's process group`);
      t.not(entry?.ppid, running.pid, `${pid} is not the runner's child`);
    }
    if (end === 'cancel') {
      t.equal((await svc.call('cancel', { task_id: handle.task_id })).body.answer, true);
      await waitState(svc, handle.task_id, 'cancelled');
    } else {
      t.match((await waitState(svc, handle.task_id, 'failed', 30_000)).error, /time/i, 'the run failed on its time limit');
    }
    t.same(await Promise.all(pids.map(isRunning)), [false, false], `none of them survives the ${end}`);
  });
}

t.test('a TypeScript Task that succeeds: what it detached is ended with its run', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace, { name: 'taskyard-detach', tasks: DETACHING_TASKS });
  const svc = await startTaskService(t, { workspace });
  const handle = await submitOk(t, svc, { task: 'leaver' });
  const done = await waitState(svc, handle.task_id, 'succeeded');
  const pid = await pidIn(join(workspace, dirname(done.log_path)), 'leaver.pid');
  t.teardown(() => { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } });
  // Ended by the runner right after it wrote the record: bounded, not a sleep.
  await waitFor(async () => !(await isRunning(pid)), 10_000, `the detached process ${pid} to end`);
  t.pass('the detached process did not outlive its run');
});
