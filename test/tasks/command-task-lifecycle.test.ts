import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { collectTree } from '../../workers/process-tree.js';
import { exited, startServiceProcess } from '../helpers/service-process.js';
import { TEST_TOKEN, waitFor } from '../helpers/service.js';
import { isRunning, killTaskProcesses, makeWorkspace, startTaskService, statusOf, submitOk, waitState, waitTask } from './task-helpers.js';

/** Works in a step until cancelled (a subprocess of its own beside it); its clean-up writes a file. */
const LONG = `
import os, subprocess, time, taskyard_task as tt
helper = subprocess.Popen(["sleep", "600"])
with tt.step("train"):
    try:
        for i in range(6000):
            tt.progress(min(100, i / 10))
            time.sleep(0.05)
    finally:
        with open(os.path.join(tt.task_dir(), "cleaned-up"), "w") as f:
            f.write("yes")
`;

/** Waits for a gate file, then reports an output: a run that lives across a service restart. */
const GATED = `
import os, sys, time, taskyard_task as tt
gate = sys.argv[1]
with tt.step("wait for the gate"):
    while not os.path.exists(gate):
        time.sleep(0.05)
tt.metric("waited", 1)
tt.output({"gate": "opened"})
`;

async function writeScript(workspace: string, name: string, text: string): Promise<string> {
  await mkdir(join(workspace, 'scripts'), { recursive: true });
  const file = join(workspace, 'scripts', name);
  await writeFile(file, text);
  return file;
}

/** The processes still carrying the run's mark: the runner, the command and whatever they started. */
async function processesOfRun(runId: string): Promise<number[]> {
  return (await collectTree([], { entry: `TASKYARD_RUN_ID=${runId}` })).map((e) => e.pid);
}

t.test('cancel mid-step: SIGTERM reaches Python, its clean-up runs, the Task ends cancelled and no process is left', async (t) => {
  const workspace = await makeWorkspace(t);
  t.teardown(() => killTaskProcesses(workspace));
  const script = await writeScript(workspace, 'long.py', LONG);
  const svc = await startTaskService(t, { workspace, config: { service: { cancel_grace_ms: 10_000 } } });
  const handle = await submitOk(t, svc, { task: 'command', argv: ['python3', script] });
  await waitFor(async () => (await statusOf(svc, handle.task_id)).steps.some((s) => s.name === 'train' && (s.percentage ?? 0) > 0), 20_000, 'the train step to report progress');
  const runner = (await statusOf(svc, handle.task_id)).pid!;
  // A pooled runner takes its run's variables after it started: /proc shows them on its children only.
  t.ok((await processesOfRun(handle.run_id)).length >= 2, 'python and its subprocess carry the run mark');

  const cancel = await svc.call('cancel', { task_id: handle.task_id });
  t.equal(cancel.body.success, true, JSON.stringify(cancel.body));
  const { status } = await waitTask(svc, handle);
  t.equal(status.state, 'cancelled');
  t.ok(existsSync(join(workspace, 'command', handle.task_id, 'cleaned-up')), "the script's finally block ran");
  t.same(await processesOfRun(handle.run_id), [], 'no process of the run is left (python, its subprocess)');
  t.notOk(await isRunning(runner), 'nor the runner');
});

t.test('the time limit ends a command and everything it started', async (t) => {
  const workspace = await makeWorkspace(t);
  t.teardown(() => killTaskProcesses(workspace));
  const svc = await startTaskService(t, { workspace });
  const handle = await submitOk(t, svc, { task: 'command', argv: ['sh', '-c', 'sleep 600 & sleep 600'], resources: { time_limit_s: 1 } });
  const { status } = await waitTask(svc, handle);
  t.equal(status.state, 'failed');
  t.match(status.error, /time limit/i);
  t.same(await processesOfRun(handle.run_id), [], 'nothing of the run is left');
});

t.test('a command run ends with its command: what it left in the background (a daemon included) is ended', async (t) => {
  const workspace = await makeWorkspace(t);
  t.teardown(() => killTaskProcesses(workspace));
  // A pool of 0 starts a runner for the run alone, which is not reused: the end is the run's, not
  // the pool's. A short run is looked at by the pids handed out since it started; one that ran
  // long enough for the pid counter to have gone round (here pid_max 32768 / 50 per ms, 0.65 s)
  // by every process.
  for (const [pool, wait] of [[0, 0], [2, 0], [2, 1.5]] as const) {
    const svc = await startTaskService(t, { workspace, config: { service: { runner_pool_size: pool } } });
    const handle = await submitOk(t, svc, { task: 'command', argv: ['sh', '-c', `sleep 600 & setsid sleep 601 & sleep ${wait}`], task_name: `pool-${pool}-${wait * 10}` });
    const { status } = await waitTask(svc, handle);
    t.equal(status.state, 'succeeded', status.error);
    // Ended before the record is written: once wait_task has answered, nothing of the run is left
    // but (without a pool, where it carries the run's mark from its start) the runner on its way out.
    t.same((await processesOfRun(handle.run_id)).filter((pid) => pid !== status.pid), [], `runner_pool_size ${pool}, a run of ${wait} s: nothing of it is left`);
    await svc.close();
  }
});

t.test('GPU leases: a command run asking for a GPU in its resources input sees only the GPU it holds', async (t) => {
  const workspace = await makeWorkspace(t);
  t.teardown(() => killTaskProcesses(workspace));
  const svc = await startTaskService(t, { workspace, config: { service: { gpus: 2 } } });
  const show = ['sh', '-c', 'echo "{\\"type\\":\\"output\\",\\"values\\":{\\"visible\\":\\"$CUDA_VISIBLE_DEVICES\\"}}" >&3; sleep "$1"', 'sh'];
  const holder = await submitOk(t, svc, { task: 'command', argv: [...show, '600'], resources: { gpus: 2 } });
  await waitState(svc, holder.task_id, 'running');
  const waiting = await submitOk(t, svc, { task: 'command', argv: [...show, '0'], resources: { gpus: 1 } });
  t.equal((await statusOf(svc, waiting.task_id)).state, 'queued', 'a run asking for a GPU waits while both are held');
  await svc.call('cancel', { task_id: holder.task_id });
  const { status } = await waitTask(svc, waiting);
  t.equal(status.state, 'succeeded', status.error);
  t.match(status.result, { visible: /^[01]$/ }, `it sees one GPU (${JSON.stringify(status.result)})`);
  const impossible = await svc.call('submit', { task: 'command', argv: ['true'], resources: { gpus: 3 } });
  t.equal(impossible.body.success, false, 'more GPUs than the machine has is refused at submit');
});

t.test('a restarted service adopts a running command Task, which then succeeds', async (t) => {
  const workspace = await makeWorkspace(t);
  t.teardown(() => killTaskProcesses(workspace));
  const gate = join(workspace, 'gate');
  const script = await writeScript(workspace, 'gated.py', GATED);
  const first = await startServiceProcess(t, workspace);
  const handle = (await first.call('submit', { task: 'command', argv: ['python3', script, gate] })).answer;
  await waitFor(async () => (await first.call('status', { task_id: handle.task_id })).answer.steps.length > 0, 20_000, 'the step to start');
  first.child.kill('SIGKILL');
  await exited(first.child);

  const second = await startServiceProcess(t, workspace);
  t.equal((await second.call('status', { task_id: handle.task_id })).answer.state, 'running', 'the run is adopted, still running');
  await writeFile(gate, '');
  const done = await second.call('wait_task', { task_id: handle.task_id, run_id: handle.run_id });
  t.equal(done.answer.state, 'succeeded', done.answer.error);
  t.same(done.answer.result, { gate: 'opened', exit_code: 0, artifacts: {} });
  t.same((await processesOfRun(handle.run_id)).filter((pid) => pid !== done.answer.pid), [], 'nothing of the run is left but its runner on its way out');
});

t.test('command is offered only where a token guards the service, and only to callers who may call shell', async (t) => {
  const open = await startTaskService(t, { token: null, config: { jobs: { submit: { requires_auth: false } } } });
  const refused = await open.call('submit', { task: 'command', argv: ['true'] });
  t.equal(refused.body.success, false);
  t.match(refused.body.answer, /^ValueError: Unknown task "command"/, 'an open service does not offer command');

  const AGENT = 'agent-token-0123456789';
  const svc = await startTaskService(t, { config: { service: { tokens: [{ name: 'agent', token: AGENT, jobs: ['submit', 'status'] }] } } });
  t.ok((await svc.call('list_installed_task_definitions')).body.answer.some((d) => d.name === 'command'), 'with a token, command is listed');
  const asAgent = await svc.fetch('/jobs/submit', { method: 'POST', headers: { authorization: `Bearer ${AGENT}`, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { task: 'command', argv: ['true'] } }) });
  const body = (await asAgent.json()) as { success: boolean; answer: string };
  t.same([body.success, body.answer], [false, 'PermissionError: the command Task runs arbitrary commands: submit it with a token that may call shell'], 'a token that may not call shell may not submit command');
  const asService = await svc.call('submit', { task: 'command', argv: ['true'] });
  t.equal(asService.body.success, true, `the service token may (${TEST_TOKEN.length} chars)`);
  t.equal((await waitTask(svc, asService.body.answer)).status.state, 'succeeded');
});

t.test('bad inputs: refused before the process starts, or failed with a clear reason', async (t) => {
  const workspace = await makeWorkspace(t);
  const svc = await startTaskService(t, { workspace });
  for (const argv of [[], 'true', [1]]) {
    const res = await svc.call('submit', { task: 'command', argv });
    t.equal(res.body.success, false, `argv ${JSON.stringify(argv)} is refused at submit`);
    t.match(res.body.answer, /^ValidationError: invalid input for task command/);
  }
  await mkdir(join(workspace, 'data'));
  const inData = await svc.call('submit', { task: 'command', argv: ['sh', '-c', 'echo "{\\"type\\":\\"output\\",\\"values\\":{\\"pwd\\":\\"$(pwd)\\"}}" >&3'], cwd: 'data' });
  t.same((await waitTask(svc, inData.body.answer)).status.result, { pwd: join(workspace, 'data'), exit_code: 0, artifacts: {} }, 'cwd is relative to the workspace');
  const escapes = await svc.call('submit', { task: 'command', argv: ['true'], cwd: '../..' });
  const escaped = (await waitTask(svc, escapes.body.answer)).status;
  t.same([escaped.state, escaped.error], ['failed', 'PermissionError: cwd escapes the workspace: ../..']);
});
