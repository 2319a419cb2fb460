import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { TaskRuns } from '../../schemas/task-runs.js';
import { collectTree } from '../../workers/process-tree.js';
import { exited, startServiceProcess } from '../helpers/service-process.js';
import { waitFor, type TestService } from '../helpers/service.js';
import { killTaskProcesses, makeWorkspace, writeFixturePlugin, startTaskService, statusOf, submitOk, waitState, type Handle } from './task-helpers.js';

/** First attempt: leaves a mark, says so, then waits to be killed (or stopped); later attempts succeed. */
const ONCE_THEN_HANG = ['sh', '-c', 'if [ -e attempted ]; then echo "attempt after a retry"; else touch attempted; echo "first attempt"; exec sleep 600; fi'];
/** First attempt exits with `code`; later ones succeed. */
const onceThenExit = (code: number) => ['sh', '-c', `if [ -e attempted ]; then echo ok; else touch attempted; exit ${code}; fi`];

function retriesConfig(retries: Record<string, unknown>, task = 'command') {
  return { tasks: { [task]: { retries } } };
}

async function runsOf(svc: TestService, taskId: string): Promise<TaskRuns['runs']> {
  const res = await svc.call('get_task_runs', { task_id: taskId });
  if (res.body.success !== true) throw new Error(`get_task_runs failed: ${JSON.stringify(res.body)}`);
  return (res.body.answer as TaskRuns).runs;
}

/** wait_task on the submit's run_id: with retries it follows the submission to its final run. */
async function waitFirstRun(svc: TestService, handle: Handle) {
  const res = await svc.call('wait_task', { task_id: handle.task_id, run_id: handle.run_id, poll_interval: 0.2 });
  return res.body as { success: boolean; answer: { state: string; run_id: string; exit_code: number; error: string; result: Record<string, unknown> } };
}

async function processesOfRun(runId: string): Promise<number[]> {
  return (await collectTree([], { entry: `TASKYARD_RUN_ID=${runId}` })).map((e) => e.pid);
}

t.test('a Task whose runner is killed is retried under the same task_id and succeeds, with both runs in its history', async (t) => {
  const workspace = await makeWorkspace(t);
  const svc = await startTaskService(t, { workspace, config: retriesConfig({ max: 2, on: ['lost'] }) });
  const definition = (await svc.call('get_task_definition', { task: 'command' })).body.answer;
  t.same(definition.retries, { max: 2, on: ['lost'], exit_codes: [], backoff_s: 0 }, 'the catalog shows the policy config gave, with its defaults');

  const handle = await submitOk(t, svc, { task: 'command', argv: ONCE_THEN_HANG });
  // Both are asked before the failure: neither may end on the attempt that is retried.
  const waited = waitFirstRun(svc, handle);
  const streamed = svc.call('stream_task', { task_id: handle.task_id, poll_interval: 0.2 });
  const dir = join(workspace, 'command', handle.task_id);
  const running = await waitFor(async () => {
    const status = await statusOf(svc, handle.task_id);
    return status.state === 'running' && status.pid && existsSync(join(dir, 'attempted')) ? status : null;
  }, 20_000, 'the first attempt to run');
  t.ok((await processesOfRun(handle.run_id)).length > 0, 'the first attempt has processes');
  process.kill(running.pid!, 'SIGKILL');

  const final = await waited;
  t.equal(final.success, true, `wait_task on the first run_id follows the retry to the final run: ${JSON.stringify(final.answer)}`);
  t.equal(final.answer.state, 'succeeded');
  t.not(final.answer.run_id, handle.run_id, 'the final run has a run_id of its own');
  const stream = await streamed;
  t.equal(stream.body.answer.state, 'succeeded', 'stream_task, started before the failure, ends with the final run');
  t.same(await processesOfRun(handle.run_id), [], "nothing of the killed attempt is left (its command's sleep was ended)");

  const runs = await runsOf(svc, handle.task_id);
  t.equal(runs.length, 2, 'two runs in the history');
  t.match(runs[0], { run_id: handle.run_id, attempt: 1, state: 'failed', exit_code: 1, retry: { cause: 'lost', next_run_id: final.answer.run_id, delay_s: 0 } });
  t.match(runs[0]!.error, /worker lost|killed by SIGKILL/);
  t.match(runs[1], { run_id: final.answer.run_id, attempt: 2, state: 'succeeded', retry: null });
  const firstLog = await svc.call('preview_file', { path: runs[0]!.log_path });
  t.match((firstLog.body.answer as { content: string }).content, /first attempt/, "the first attempt's log is kept and readable");
  const log = await svc.call('read_task_log', { task_id: handle.task_id, offset: 0 });
  t.match(log.body.answer.content, /attempt after a retry/, 'the Task log is the final run\'s');
  t.notMatch(log.body.answer.content, /first attempt/);
  const earlier = await svc.call('preview_file', { path: runs[0]!.status_path });
  t.match(JSON.parse((earlier.body.answer as { content: string }).content), { run_id: handle.run_id, state: 'failed' }, "the first attempt's status record is kept");
});

t.test('an exception is not retried unless its exit code is listed; a listed exit code is, until the attempts run out', async (t) => {
  const config = { tasks: { demo: { retries: { max: 3, on: ['lost', 'node_fail', 'timeout'] } }, command: { retries: { max: 1, on: [], exit_codes: [3] } } } };
  const svc = await startTaskService(t, { config });
  const failing = await submitOk(t, svc, { task: 'demo', x: 1, y: 2, fail: true });
  const failed = await waitFirstRun(svc, failing);
  t.equal(failed.answer.state, 'failed');
  t.equal(failed.answer.run_id, failing.run_id, 'the exception ended the only run');
  t.equal((await runsOf(svc, failing.task_id)).length, 1, 'one run in the history');

  const listed = await submitOk(t, svc, { task: 'command', argv: onceThenExit(3) });
  const recovered = await waitFirstRun(svc, listed);
  t.equal(recovered.answer.state, 'succeeded', 'exit code 3 is listed: the second attempt succeeds');
  t.match(await runsOf(svc, listed.task_id), [{ attempt: 1, exit_code: 3, retry: { cause: 'exit_code' } }, { attempt: 2, state: 'succeeded' }]);

  const unlisted = await submitOk(t, svc, { task: 'command', argv: onceThenExit(4) });
  t.equal((await waitFirstRun(svc, unlisted)).answer.exit_code, 4, 'exit code 4 is not listed: the failure stands');
  t.equal((await runsOf(svc, unlisted.task_id)).length, 1);

  const always = await submitOk(t, svc, { task: 'command', argv: ['sh', '-c', 'exit 3'] });
  const exhausted = await waitFirstRun(svc, always);
  t.match(exhausted.answer, { state: 'failed', exit_code: 3 }, 'max 1: the second failure stands');
  t.match(await runsOf(svc, always.task_id), [{ attempt: 1, retry: { cause: 'exit_code' } }, { attempt: 2, state: 'failed', retry: null }]);
});

t.test('a run stopped at its time limit is retried as a timeout', async (t) => {
  const svc = await startTaskService(t, { config: retriesConfig({ max: 1, on: ['timeout'] }) });
  const handle = await submitOk(t, svc, { task: 'command', argv: ONCE_THEN_HANG, resources: { time_limit_s: 1 } });
  const final = await waitFirstRun(svc, handle);
  t.equal(final.answer.state, 'succeeded');
  const runs = await runsOf(svc, handle.task_id);
  t.match(runs[0], { state: 'failed', retry: { cause: 'timeout' } });
  t.match(runs[0]!.error, /time limit/);
});

t.test('a cancel while the next attempt waits out its backoff cancels it; the Task never shows the retried failure', async (t) => {
  const svc = await startTaskService(t, { config: retriesConfig({ max: 3, on: ['lost'], exit_codes: [3], backoff_s: 600 }) });
  const seen = new Set<string>();
  const handle = await submitOk(t, svc, { task: 'command', argv: onceThenExit(3) });
  const queued = await waitFor(async () => {
    const status = await statusOf(svc, handle.task_id);
    seen.add(status.state);
    return status.run_id !== handle.run_id ? status : null;
  }, 20_000, 'the next attempt to be queued');
  t.equal(queued.state, 'queued', 'the next attempt waits for its backoff, queued');
  t.notOk(seen.has('failed'), 'the retried failure was never shown');
  t.match(await runsOf(svc, handle.task_id), [{ attempt: 1, retry: { cause: 'exit_code', delay_s: 600 } }, { attempt: 2, state: 'queued' }]);

  const cancel = await svc.call('cancel', { task_id: handle.task_id });
  t.equal(cancel.body.answer, true, 'cancel cancels the waiting attempt');
  const final = await waitFirstRun(svc, handle);
  t.equal(final.answer.state, 'cancelled');
  const status = await waitState(svc, handle.task_id, 'cancelled');
  t.equal(status.run_id, queued.run_id);
});

t.test('a wait on a run_id that was never part of the submission still fails', async (t) => {
  const svc = await startTaskService(t, { config: retriesConfig({ max: 1, exit_codes: [3] }) });
  const handle = await submitOk(t, svc, { task: 'command', argv: onceThenExit(3) });
  await waitFirstRun(svc, handle);
  for (const runId of ['0123456789abcdef', '../../etc']) {
    const res = await svc.call('wait_task', { task_id: handle.task_id, run_id: runId });
    t.equal(res.body.success, false, `run_id ${runId} fails`);
    t.match(String(res.body.answer), /not the current execution/);
  }
});

t.test('a run lost while the service was down is retried by the next service, which counts the attempts already made', async (t) => {
  const workspace = await makeWorkspace(t);
  t.teardown(() => killTaskProcesses(workspace));
  const config = join(workspace, 'retries.json');
  await writeFile(config, JSON.stringify({ service: { runner_pool_size: 1, gpus: 0 }, ...retriesConfig({ max: 1, on: ['lost'] }) }));
  /** Starts a service, waits for the Task to run an attempt other than `before`, then kills the service and every Task process. */
  const loseAttempt = async (taskId: string | null, before: string | null) => {
    const svc = await startServiceProcess(t, workspace, { config });
    const handle = taskId ? null : (await svc.call('submit', { task: 'command', argv: ['sleep', '600'] })).answer;
    const id = taskId ?? handle!.task_id;
    const running = await waitFor(async () => {
      const status = (await svc.call('status', { task_id: id })).answer;
      return status.state === 'running' && status.run_id !== before ? status : null;
    }, 20_000, 'an attempt to run');
    svc.child.kill('SIGKILL');
    await exited(svc.child);
    // Its runner dies while no service watches it; its command (sleep) lives on, orphaned.
    process.kill(running.pid!, 'SIGKILL');
    await waitFor(async () => (await processesOfRun(running.run_id)).length === 1, 10_000, 'only the command to be left');
    return { id, runId: running.run_id };
  };
  const first = await loseAttempt(null, null);
  const second = await loseAttempt(first.id, first.runId);
  t.pass('the next service retried the run lost while it was down');

  // The last service is not killed: it runs in this process (the same configuration), sparing a
  // service process's start.
  const third = await startTaskService(t, { workspace, config: retriesConfig({ max: 1, on: ['lost'] }) });
  const final = (await third.call('wait_task', { task_id: first.id, run_id: first.runId, poll_interval: 0.2 })).body;
  t.match(final.answer, { state: 'failed', run_id: second.runId }, 'max 1: the second lost attempt is not retried again');
  const runs = (await third.call('get_task_runs', { task_id: first.id })).body.answer as TaskRuns;
  t.match(runs.runs, [{ run_id: first.runId, attempt: 1, state: 'failed', retry: { cause: 'lost', next_run_id: second.runId } }, { run_id: second.runId, attempt: 2, state: 'failed', retry: null }]);
  t.match(runs.runs[1]!.error, /worker lost/);
  t.same(await processesOfRun(first.runId), [], "the next service ended the first attempt's orphaned command before retrying");
});

/** A TypeScript Task whose definition asks for retries: its first attempt kills its own runner. */
const DYING_TASKS = `
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineTask } from 'taskyard/task';
export default [
  defineTask({
    name: 'dies-once',
    taskType: 'fixture',
    description: 'Kills its own runner on the first attempt, succeeds on the next.',
    input: { type: 'object', properties: {} },
    output: { type: 'object', properties: { attempt: { type: 'integer' } } },
    retries: { max: 1 },
    async run(_input, ctx) {
      const mark = join(ctx.workspace_path, 'fixture', ctx.task_id, 'died');
      if (!existsSync(mark)) {
        writeFileSync(mark, ctx.run_id);
        process.kill(process.pid, 'SIGKILL');
      }
      return { attempt: 2 };
    },
  }),
];
`;

t.test("a plugin definition's own retry policy: its runner killed by its own code is lost, and retried", async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace, { name: 'taskyard-dying', tasks: DYING_TASKS });
  const svc = await startTaskService(t, { workspace });
  t.same((await svc.call('get_task_definition', { task: 'dies-once' })).body.answer.retries, { max: 1, on: ['lost', 'node_fail'], exit_codes: [], backoff_s: 0 }, 'the SDK filled in the defaults');
  const handle = await submitOk(t, svc, { task: 'dies-once' });
  const final = await waitFirstRun(svc, handle);
  t.match(final.answer, { state: 'succeeded', result: { attempt: 2 } });
  t.match(await runsOf(svc, handle.task_id), [{ run_id: handle.run_id, state: 'failed', retry: { cause: 'lost' } }, { state: 'succeeded' }]);
});

t.test("a Task that plants links where its run history goes cannot make the service write through them", async (t) => {
  const outside = await makeWorkspace(t);
  const svc = await startTaskService(t, { config: retriesConfig({ max: 1, on: [], exit_codes: [3] }) });
  // Its `runs` leads out of the workspace; a listed exit code asks for a retry.
  const handle = await submitOk(t, svc, { task: 'command', argv: ['sh', '-c', `ln -s ${outside} runs; echo planted; exit 3`] });
  const final = await waitFirstRun(svc, handle);
  t.match(final.answer, { state: 'failed', exit_code: 3, run_id: handle.run_id }, 'the retry is refused: the failure stands');
  t.same(await readdir(outside), [], 'nothing was moved or written through the link');
  t.same((await runsOf(svc, handle.task_id)).map((r) => r.run_id), [handle.run_id], 'and the link is no history');
});
