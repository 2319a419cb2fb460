import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { isAlive } from '../../workers/process-tree.js';
import { CLI, runCli, type CliRun } from '../helpers/run-cli.js';
import { startTestService, waitFor, type TestService } from '../helpers/service.js';

const home = await mkdtemp(join(tmpdir(), 'taskyard-run-home-'));
t.teardown(() => rm(home, { recursive: true, force: true }));
/** A token that may submit and follow, but not call shell: the command Task is not for it. */
const NO_SHELL = 'no-shell-token-0123456789';
const svc = await startTestService(t, { config: { service: { gpus: 2, tokens: [{ name: 'no-shell', token: NO_SHELL, jobs: ['submit', 'stream_task', 'cancel'] }] } } });

/** The CLI's environment against `service`; HOME is a temp dir so no real token file is read. */
const envOf = (service: TestService, extra: Record<string, string> = {}) => ({ HOME: home, TASKYARD_URL: service.url, TASKYARD_TOKEN: service.token ?? '', ...extra });
const run = (args: string[], env: Record<string, string> = {}): Promise<CliRun> => runCli(['run', ...args], envOf(svc, env));
const python = (script: string) => ['python3', '-c', script];
/** The Task ID `taskyard run` prints on its first stderr line. */
const taskIdOf = (stderr: string) => /^task (\S+) {2}\(run \w+\)$/m.exec(stderr.split('\n')[0] ?? '')?.[1];

t.test('runs a command, prints the Task ID first and the log line, exits 0', async (t) => {
  const ran = await run(['--task-name', 'hello', '--', ...python('print("hello from python")')]);
  t.equal(ran.code, 0, ran.stderr);
  t.equal(taskIdOf(ran.stderr), 'command#command#hello', 'the Task ID is the first line on stderr');
  t.match(ran.stdout, /^hello from python$/m);
  t.match(ran.stderr, /command#command#hello {2}succeeded/);
  const status = await svc.call('status', { task_id: 'command#command#hello' });
  t.match(status.body.answer, { state: 'succeeded', exit_code: 0, config: { argv: python('print("hello from python")') } });
});

t.test("exits with the command's exit code", async (t) => {
  const ran = await run(['--', ...python('import sys; print("bye"); sys.exit(3)')]);
  t.equal(ran.code, 3, ran.stderr);
  t.match(ran.stdout, /^bye$/m);
  t.match(ran.stderr, /failed in [\d.]+ s {2}· {2}exit code 3/);
});

t.test('a Python exception prints its traceback and type, and exits 1', async (t) => {
  const ran = await run(['--', ...python('def train(lr):\n    raise ValueError("lr must be positive")\ntrain(-1)')]);
  t.equal(ran.code, 1, ran.stderr);
  t.match(ran.stdout, /Traceback \(most recent call last\):[\s\S]*ValueError: lr must be positive/, 'the traceback is in the log');
  t.match(ran.stderr, /exit code 1 .*ValueError: lr must be positive/, 'the status line names the exception');
});

t.test('steps and progress reported through taskyard_task are shown as they come', async (t) => {
  const script = [
    'import taskyard_task as tt',
    'with tt.step("prepare"):',
    '    print("preparing", flush=True)',
    'with tt.step("train"):',
    '    tt.progress(40)',
    '    tt.metric("loss", 0.25, step=1)',
    '    print("training", flush=True)',
    'tt.output({"final_loss": 0.25})',
  ].join('\n');
  const ran = await run(['--task-name', 'stepped', '--', ...python(script)]);
  t.equal(ran.code, 0, ran.stderr);
  t.match(ran.stdout, /preparing\n[\s\S]*training\n/);
  t.match(ran.stderr, /\[progress\] prepare[\s\S]*\[progress\] train 40%/);
  const status = await svc.call('status', { task_id: 'command#command#stepped' });
  t.match(status.body.answer, { steps: [{ name: 'prepare' }, { name: 'train', percentage: 40 }], result: { exit_code: 0, final_loss: 0.25 } });
});

t.test('--cwd, --env and --source-tasks reach the Task', async (t) => {
  await mkdir(join(svc.workspace, 'data'), { recursive: true });
  const script = 'import os; print("cwd=" + os.getcwd()); print("lr=" + os.environ["LR"] + " seed=" + os.environ["SEED"])';
  const ran = await run(['--cwd', 'data', '--env', 'LR=0.1', '--env=SEED=7', '--source-tasks', 'command#command#hello', '--task-name', 'placed', '--', ...python(script)]);
  t.equal(ran.code, 0, ran.stderr);
  t.match(ran.stdout, `cwd=${await realpath(join(svc.workspace, 'data'))}\n`);
  t.match(ran.stdout, 'lr=0.1 seed=7');
  const status = await svc.call('status', { task_id: 'command#command#placed' });
  t.match(status.body.answer.config, { cwd: 'data', env: { LR: '0.1', SEED: '7' }, source_tasks: 'command#command#hello' });
});

t.test('--gpus N: the run holds N of the machine\'s GPUs and sees only those; more than the machine has is refused', async (t) => {
  const ran = await run(['--gpus', '1', '--', ...python('import os; print("visible=" + os.environ["CUDA_VISIBLE_DEVICES"])')]);
  t.equal(ran.code, 0, ran.stderr);
  t.match(ran.stdout, /^visible=[01]$/m, 'one leased GPU');
  const id = taskIdOf(ran.stderr)!;
  t.match((await svc.call('status', { task_id: id })).body.answer.config, { resources: { gpus: 1 } }, 'the request is the resources input');
  const before = (await svc.call('list_task_ids', {})).body.answer;
  const tooMany = await run(['--gpus', '3', '--', 'true']);
  t.equal(tooMany.code, 1);
  t.match(tooMany.stderr, /gpus/, tooMany.stderr);
  t.same((await svc.call('list_task_ids', {})).body.answer, before, 'nothing was submitted');
});

t.test('usage errors and help', async (t) => {
  const noDash = await run(['python3', 'train.py']);
  t.equal(noDash.code, 2);
  t.match(noDash.stderr, 'put the command after --');
  const empty = await run(['--task-name', 'x', '--']);
  t.equal(empty.code, 2);
  t.match(empty.stderr, 'put the command after --');
  const badEnv = await run(['--env', 'NOEQUALS', '--', 'true']);
  t.equal(badEnv.code, 2);
  t.match(badEnv.stderr, '--env takes NAME=VALUE, got "NOEQUALS"');
  const unknown = await run(['--lr', '0.1', '--', 'true']);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /Unknown option '--lr' \(the command itself goes after --\)/);
  const badGpus = await run(['--gpus', 'two', '--', 'true']);
  t.equal(badGpus.code, 2);
  const help = await run(['--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /^usage: taskyard run \[--task-name NAME\][\s\S]*-- PROGRAM \[ARG ...\]/);
  t.match(help.stdout, /Ctrl-C cancels the Task/);
  const general = await runCli(['--help'], envOf(svc));
  t.match(general.stdout, 'taskyard run [--gpus N ...] -- PROGRAM [ARG ...]');
  const theirs = await run(['--', ...python('import sys; print("args", sys.argv[1:])'), '--help', '-h']);
  t.equal(theirs.code, 0, 'flags after -- are the command’s');
  t.match(theirs.stdout, "args ['--help', '-h']");
});

t.test('a service that does not offer the command Task to the caller: the refusal says why and how to fix it', async (t) => {
  const open = await startTestService(t, { token: null });
  const refused = await runCli(['run', '--', 'true'], envOf(open));
  t.equal(refused.code, 1);
  t.match(refused.stderr, /runs without a token \(taskyard serve --no-token\), and an open service does not offer the command Task/);
  t.match(refused.stderr, /Start it with a token/);
  const scoped = await run(['--', 'true'], { TASKYARD_TOKEN: NO_SHELL });
  t.equal(scoped.code, 1);
  t.match(scoped.stderr, /PermissionError: the command Task runs arbitrary commands/);
  t.match(scoped.stderr, /a scoped token whose jobs include submit and shell/);
});

t.test('Ctrl-C cancels the Task, ends its processes and exits 130', async (t) => {
  const script = [
    'import subprocess, time',
    'child = subprocess.Popen(["sleep", "600"])',
    'import os',
    'print("pids", os.getpid(), child.pid, flush=True)',
    'time.sleep(600)',
  ].join('\n');
  const cli = spawn(process.execPath, [CLI, 'run', '--', ...python(script)], { env: { PATH: process.env['PATH'] ?? '', ...envOf(svc) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  cli.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  cli.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => cli.once('exit', (code) => resolve(code)));
  t.teardown(() => void (cli.exitCode === null && cli.kill('SIGKILL')));
  const [, pid, childPid] = (await waitFor(() => /^pids (\d+) (\d+)$/m.exec(stdout), 60_000, 'the command to start')).map(Number);
  cli.kill('SIGINT');
  t.equal(await exited, 130, stderr);
  t.match(stderr, /taskyard run: cancelling command#command#/);
  const status = await svc.call('status', { task_id: taskIdOf(stderr) });
  t.match(status.body.answer, { state: 'cancelled', exit_code: 130 });
  t.notOk(await isAlive(pid!), 'the Python process is gone');
  t.notOk(await isAlive(childPid!), 'its child is gone');
});
