import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { exited, SERVICE_PROCESS_TOKEN, startServiceProcess, type ServiceProcess } from '../helpers/service-process.js';
import { parseSse, waitFor } from '../helpers/service.js';
import { groupGone, isRunning, killTaskProcesses, makeWorkspace, startTaskService } from './task-helpers.js';

const TOKEN = SERVICE_PROCESS_TOKEN;

/**
 * Writes a record that claims to be running, as another tool might: its pid is this test
 * process, alive but no task runner. Answers its Task ID.
 */
async function writeForeignRecord(workspace: string, name: string): Promise<string> {
  const id = `base#demo#${name}`;
  await mkdir(join(workspace, 'base', id), { recursive: true });
  const now = new Date().toISOString();
  await writeFile(join(workspace, 'base', id, 'status.json'), JSON.stringify({
    task_id: id, run_id: 'f'.repeat(32), task_type: 'base', task_name: 'demo', config: { x: 1, y: 2, fail: false, task_name: name, source_tasks: '' },
    state: 'running', pid: process.pid, created_at: now, started_at: now, finished_at: null, steps: [], result: {}, error: '', exit_code: 0, log_path: `base/${id}/task.log`,
  }));
  return id;
}

/** Reads `stream_task` events until the first log event, then disconnects. */
async function firstLogEvent(url: string, taskId: string): Promise<Record<string, unknown>> {
  const abort = new AbortController();
  const res = await fetch(`${url}/jobs/stream_task/events`, { method: 'POST', signal: abort.signal, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { task_id: taskId } }) });
  const reader = res.body!.getReader();
  let raw = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended without a log event: ${raw}`);
      raw += Buffer.from(value).toString('utf8');
      // Bytes arrive split anywhere (the first read may hold only the start of a frame).
      const end = raw.lastIndexOf('\n\n');
      if (end === -1) continue;
      const complete = raw.slice(0, end + 2);
      const log = parseSse(complete).find((e) => e['kind'] === 'log');
      if (log) return log;
    }
  } finally {
    abort.abort();
  }
}

t.test('restart: a live worker is adopted again, a dead one is marked "worker lost"', async (t) => {
  const workspace = await makeWorkspace(t);
  t.teardown(() => killTaskProcesses(workspace));
  const first = await startServiceProcess(t, workspace);
  const keep = (await first.call('submit', { task: 'sleep', seconds: 120, steps: 240, task_name: 'keep' })).answer;
  const lose = (await first.call('submit', { task: 'sleep', seconds: 120, task_name: 'lose' })).answer;
  const running = async (svc: ServiceProcess, id: string) =>
    waitFor(async () => {
      const status = (await svc.call('status', { task_id: id })).answer;
      return status.state === 'running' ? status : null;
    }, 15_000, `${id} running`);
  const keepPid = (await running(first, keep.task_id)).pid!;
  const losePid = (await running(first, lose.task_id)).pid!;

  first.child.kill('SIGKILL');
  await exited(first.child);
  t.ok((await isRunning(keepPid)) && (await isRunning(losePid)), 'workers outlive the service');
  process.kill(-losePid, 'SIGKILL');
  await waitFor(async () => !(await isRunning(losePid)), 5000, 'the lost worker to die');

  // A record claiming a live process that is not its runner (this test process): a pid alone
  // proves nothing, so it is lost too.
  const impostor = await writeForeignRecord(workspace, 'impostor');

  const second = await startServiceProcess(t, workspace);
  const impostorStatus = (await second.call('status', { task_id: impostor })).answer;
  t.same([impostorStatus.state, impostorStatus.error.startsWith('RuntimeError: worker lost')], ['failed', true], 'a live pid that is not the run\'s runner is not adopted');
  const lost = (await second.call('status', { task_id: lose.task_id })).answer;
  t.equal(lost.state, 'failed');
  t.match(lost.error, /^RuntimeError: worker lost/);
  t.not(lost.exit_code, 0);
  const lostWait = await second.call('wait_task', { task_id: lose.task_id, run_id: lose.run_id });
  t.equal(lostWait.success, false);

  const adopted = (await second.call('status', { task_id: keep.task_id })).answer;
  t.same([adopted.state, adopted.pid, adopted.run_id], ['running', keepPid, keep.run_id], 'the live worker is still running under the new service');
  const log = await firstLogEvent(second.url, keep.task_id);
  t.match(log['content'], /step \d+\/240/, 'the adopted Task is followable');

  const waiting = second.call('wait_task', { task_id: keep.task_id, run_id: keep.run_id });
  t.equal((await second.call('cancel', { task_id: keep.task_id })).answer, true, 'the adopted Task is cancellable');
  const waited = await waiting;
  t.same([waited.answer.state, waited.answer.exit_code], ['cancelled', 130]);
  await waitFor(() => groupGone(keepPid), 5000, 'the adopted group to end');
  t.pass('adopted process group gone');

  second.child.kill('SIGTERM');
  await exited(second.child);
  t.equal(second.child.exitCode, 0, 'the service stops cleanly');
});

t.test('a running record written by another tool while the service runs is settled as "worker lost"', async (t) => {
  const svc = await startTaskService(t);
  const id = await writeForeignRecord(svc.workspace, 'foreign');
  const settled = await waitFor(async () => {
    const res = await svc.call('status', { task_id: id });
    const status = res.body.answer;
    return res.body.success && status.state !== 'running' ? status : null;
  }, 15_000, 'the foreign record to be settled');
  t.equal(settled.state, 'failed');
  t.match(settled.error, /^RuntimeError: worker lost/);
  t.equal((await svc.call('wait_task', { task_id: id, run_id: 'f'.repeat(32) })).body.success, false, 'waiting on it ends');
});
