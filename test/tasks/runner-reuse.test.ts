/**
 * A pooled runner that served a command run serves the next one instead of exiting (issue 27,
 * item 6), and the next run sees nothing of the last: environment, working directory, open
 * files, output, leftover processes. Cancel and a service restart still reach a reused runner's
 * run. Plugin and built-in TypeScript Tasks run inside the runner: their runners still exit.
 */
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { NO_RUN_YET } from '../../runner/spawner-messages.js';
import { exited, startServiceProcess, type ServiceProcess } from '../helpers/service-process.js';
import { waitFor } from '../helpers/service.js';
import { groupGone, isRunning, killTaskProcesses, makeWorkspace, startTaskService, submitOk, waitState, waitTask, type Handle, type Status } from './task-helpers.js';

const PYTHON = '/usr/bin/python3';

/**
 * Run A: leaves two processes behind (one in a session of its own, one in the runner's group with
 * an empty environment), writes their pids, says something on stdout and stderr, and fails.
 */
const LEAVE_AND_FAIL = `
import os, subprocess, sys
kept = [subprocess.Popen(['sleep', '300'], start_new_session=True), subprocess.Popen(['/bin/sleep', '301'], env={})]
open('leftovers.txt', 'w').write(' '.join(str(p.pid) for p in kept))
held = open('held-open.txt', 'w')
print('run-a-stdout', flush=True)
print('run-a-stderr', file=sys.stderr, flush=True)
sys.exit(3)
`;

/** Run B: reports its environment, working directory and open descriptors as its output. */
const PROBE = `
import json, os, sys
fds = {}
for fd in os.listdir('/proc/self/fd'):
    try:
        fds[fd] = os.readlink('/proc/self/fd/' + fd)
    except OSError:
        pass
print('run-b-stdout', flush=True)
print('run-b-stderr', file=sys.stderr, flush=True)
line = json.dumps({'type': 'output', 'values': {'env': dict(os.environ), 'cwd': os.getcwd(), 'fds': fds}})
os.write(int(os.environ['TASKYARD_PROTOCOL_FD']), (line + '\\n').encode())
`;

/** Whether `pid` is a pooled runner back in the pool: no run in its title, blocked reading its channel (fd 3). */
async function idleRunner(pid: number): Promise<boolean> {
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'latin1').catch(() => '');
  const syscall = await readFile(`/proc/${pid}/syscall`, 'latin1').catch(() => '');
  return cmdline.includes(NO_RUN_YET) && syscall.startsWith('0 0x3 ');
}

const taskDir = (workspace: string, status: Status) => join(workspace, status.task_type, status.task_id);

/** A first command run, and its runner back in the pool: the next command run is handed to it. */
async function reusedRunner(submit: () => Promise<Status>): Promise<number> {
  const first = await submit();
  const pid = first.pid!;
  await waitFor(() => idleRunner(pid), 20_000, `runner ${pid} to be back in the pool`);
  return pid;
}

t.test('a pooled runner serves the next command run; that run sees nothing of the last (environment, directory, files, output, processes)', async (t) => {
  const svc = await startTaskService(t);
  const ws = svc.workspace;
  t.teardown(() => killTaskProcesses(ws));
  await mkdir(join(ws, 'dir-a'));

  const a = await submitOk(t, svc, { task: 'command', argv: [PYTHON, '-c', LEAVE_AND_FAIL], cwd: 'dir-a', env: { RUN_A_ONLY: 'yes' } });
  const aDone = (await waitTask(svc, a)).status;
  t.same([aDone.state, aDone.exit_code], ['failed', 3], 'run A failed with its exit code');
  const leftovers = (await readFile(join(ws, 'dir-a', 'leftovers.txt'), 'utf8')).split(' ').map(Number);
  const runner = aDone.pid!;
  await waitFor(() => idleRunner(runner), 20_000, `runner ${runner} to be back in the pool`);
  // The runner ends what the run left before it goes back to the pool.
  for (const pid of leftovers) t.notOk(await isRunning(pid), `run A's leftover ${pid} was ended before the runner went back to the pool`);

  const b = await submitOk(t, svc, { task: 'command', argv: [PYTHON, '-c', PROBE] });
  const bDone = (await waitTask(svc, b)).status;
  t.equal(bDone.state, 'succeeded', `run B succeeded: ${bDone.error}`);
  t.equal(bDone.pid, runner, 'the runner of run A served run B');
  const seen = bDone.result as { env: Record<string, string>; cwd: string; fds: Record<string, string> };
  const aDir = taskDir(ws, aDone);
  const bDir = taskDir(ws, bDone);

  t.notOk('RUN_A_ONLY' in seen.env, "run A's env input is not in run B's environment");
  t.equal(seen.env['TASKYARD_RUN_ID'], b.run_id, "run B carries its own run's mark");
  t.equal(seen.env['TASKYARD_TASK_ID'], b.task_id);
  t.equal(seen.env['TASKYARD_TASK_DIR'], bDir);
  const helperDirs = (seen.env['PYTHONPATH'] ?? '').split(':').filter((dir) => dir.endsWith('/python'));
  t.equal(helperDirs.length, 1, `the Python helper is on PYTHONPATH once, not once per run served: ${seen.env['PYTHONPATH']}`);
  t.equal(seen.cwd, await realpath(bDir), "run B runs in its own Task directory, not run A's cwd");
  for (const [fd, target] of Object.entries(seen.fds)) {
    t.notOk(target.includes(aDir) || target.includes('dir-a'), `run B's descriptor ${fd} (${target}) is nothing of run A's`);
  }
  // stdin, stdout (task.log), stderr and the protocol channel, and the directory listing itself.
  t.ok(Object.keys(seen.fds).length <= 5, `run B holds only its standard descriptors: ${JSON.stringify(seen.fds)}`);
  t.equal(seen.fds['1'], join(bDir, 'task.log'), "run B's stdout is its own task.log");

  const aLog = await readFile(join(aDir, 'task.log'), 'utf8');
  const bLog = await readFile(join(bDir, 'task.log'), 'utf8');
  t.match(aLog, /run-a-stdout[\s\S]*run-a-stderr/, "run A's log has its output");
  t.notMatch(aLog, /run-b/, "run A's log has nothing of run B");
  t.match(bLog, /run-b-stdout[\s\S]*run-b-stderr/, "run B's log has its output");
  t.notMatch(bLog, /run-a/, "run B's log has nothing of run A");
});

t.test('a TypeScript Task runs inside its runner: that runner exits after it, as before', async (t) => {
  const svc = await startTaskService(t);
  t.teardown(() => killTaskProcesses(svc.workspace));
  const done = (await waitTask(svc, await submitOk(t, svc, { task: 'demo', x: 1, y: 2 }))).status;
  t.equal(done.state, 'succeeded');
  await waitFor(async () => !(await isRunning(done.pid!)), 20_000, 'the demo runner to exit');
  t.pass('the demo runner exited');
});

t.test("cancel of a reused runner's run ends the run, the runner and the command", async (t) => {
  const svc = await startTaskService(t);
  t.teardown(() => killTaskProcesses(svc.workspace));
  const runCommand = async (argv: string[]): Promise<Handle> => submitOk(t, svc, { task: 'command', argv });
  const runner = await reusedRunner(async () => (await waitTask(svc, await runCommand(['true']))).status);
  const long = await runCommand([PYTHON, '-c', 'import time\nprint("started", flush=True)\ntime.sleep(300)']);
  const running = await waitState(svc, long.task_id, 'running');
  t.equal(running.pid, runner, 'the reused runner took the long run');
  t.equal((await svc.call('cancel', { task_id: long.task_id })).body.answer, true);
  const cancelled = await waitState(svc, long.task_id, 'cancelled');
  t.equal(cancelled.exit_code, 130);
  t.notOk(await isRunning(runner), 'the runner is gone');
  t.ok(await groupGone(runner), 'nothing of its process group is left');
});

t.test("a restarted service adopts a reused runner's run, which then succeeds", async (t) => {
  const workspace = await makeWorkspace(t);
  t.teardown(() => killTaskProcesses(workspace));
  const call = async (svc: ServiceProcess, name: 'submit' | 'wait_task' | 'status', args: Record<string, unknown>) => (await svc.call(name, args)).answer as unknown;
  let svc = await startServiceProcess(t, workspace);
  const submitCommand = async (argv: string[]) => (await call(svc, 'submit', { task: 'command', argv })) as Handle;
  const runner = await reusedRunner(async () => {
    const h = await submitCommand(['true']);
    return (await call(svc, 'wait_task', { task_id: h.task_id, run_id: h.run_id })) as Status;
  });
  // Waits for a file in its Task directory, then succeeds.
  const waiting = await submitCommand([PYTHON, '-c', 'import os, time\nwhile not os.path.exists("go"): time.sleep(0.05)\nprint("went", flush=True)']);
  const running = await waitFor(async () => {
    const s = (await call(svc, 'status', { task_id: waiting.task_id })) as Status;
    return s.state === 'running' ? s : null;
  }, 20_000, 'the waiting run to be running');
  t.equal(running.pid, runner, 'the reused runner took the waiting run');

  svc.child.kill('SIGTERM');
  await exited(svc.child);
  t.ok(await isRunning(runner), 'the runner lives on while the service is away');
  svc = await startServiceProcess(t, workspace);
  const adopted = (await call(svc, 'status', { task_id: waiting.task_id })) as Status;
  t.same([adopted.state, adopted.pid], ['running', runner], 'the restarted service adopted the run');
  await writeFile(join(taskDir(workspace, running), 'go'), '');
  const done = (await call(svc, 'wait_task', { task_id: waiting.task_id, run_id: waiting.run_id })) as Status;
  t.equal(done.state, 'succeeded', `the adopted run succeeded: ${done.error}`);
  // Its service (and channel) gone, the runner does not go back to a pool: it exits.
  await waitFor(async () => !(await isRunning(runner)), 20_000, 'the runner to exit after the adopted run');
  t.pass('the runner exited');
});

t.test('runners kept by long command runs do not keep the next run waiting: the pool starts others', async (t) => {
  const svc = await startTaskService(t, { config: { service: { runner_pool_size: 1 } } });
  t.teardown(() => killTaskProcesses(svc.workspace));
  const long = [];
  for (let i = 0; i < 3; i++) long.push(await submitOk(t, svc, { task: 'command', argv: [PYTHON, '-c', 'import time\ntime.sleep(300)'] }));
  for (const h of long) await waitState(svc, h.task_id, 'running', 30_000);
  const short = (await waitTask(svc, await submitOk(t, svc, { task: 'command', argv: ['true'] }))).status;
  t.equal(short.state, 'succeeded', 'a fourth run got a runner while three kept theirs');
  for (const h of long) t.equal((await svc.call('cancel', { task_id: h.task_id })).body.answer, true);
});
