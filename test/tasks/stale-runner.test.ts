/**
 * A runner that starts after its run was settled (a Slurm job the service gave up on, a run
 * settled while its runner was on its way) or after a newer run took the directory leaves the
 * record as it found it: it never writes `running` over a terminal record or another run's.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { RUNNER } from '../../runner/runner-file.js';
import { RUN_FLAG } from '../../runner/spawner-messages.js';
import { MEMORY_ROOT } from '../helpers/memory-dir.js';

const TASK_ID = 'base#demo#late';

/** A Task directory holding `record`, and a runner started for `runId` on it: its exit code, stderr and the record after. */
async function runOn(record: Record<string, unknown>, runId: string): Promise<{ code: number | null; stderr: string; after: Record<string, unknown> }> {
  const workspace = await mkdtemp(join(MEMORY_ROOT, 'taskyard-stale-runner-'));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  const dir = join(workspace, 'base', TASK_ID);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'status.json'), JSON.stringify(record));
  await writeFile(join(dir, 'events.jsonl'), '');
  const env = {
    ...process.env,
    TASKYARD_WORKSPACE: workspace,
    TASKYARD_TASK_DIR: dir,
    TASKYARD_TASK_ID: TASK_ID,
    TASKYARD_RUN_ID: runId,
    TASKYARD_TASK_TYPE: 'base',
    TASKYARD_TASK_REGISTRATION: 'demo',
    TASKYARD_TASK_MODULE: '',
  };
  const child = spawn(process.execPath, [RUNNER, RUN_FLAG, runId], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stderr, after: JSON.parse(await readFile(join(dir, 'status.json'), 'utf8')) as Record<string, unknown> };
}

const record = (state: string, runId: string) => ({
  task_id: TASK_ID, run_id: runId, task_type: 'base', task_name: 'demo', config: { task_name: 'late', source_tasks: '', x: 2, y: 3, fail: false },
  state, pid: null, created_at: new Date().toISOString(), started_at: null, finished_at: state === 'queued' ? null : new Date().toISOString(),
  steps: [], result: {}, error: state === 'failed' ? 'RuntimeError: Slurm no longer knows job 7' : '', exit_code: state === 'failed' ? 1 : 0, log_path: '',
});

t.test('a runner for a queued record of its own run runs it (the control)', async (t) => {
  const { code, after } = await runOn(record('queued', 'run-a'), 'run-a');
  t.equal(code, 0);
  t.equal(after['state'], 'succeeded');
});

t.test('a runner that finds its run already settled leaves the record alone', async (t) => {
  const settled = record('failed', 'run-a');
  const { code, stderr, after } = await runOn(settled, 'run-a');
  t.equal(code, 1);
  t.same(after, settled, 'the settled record is unchanged');
  t.match(stderr, /run run-a is not this Task's live run \(its record says run run-a, failed\); nothing was started/);
});

t.test("a runner that finds another run's record leaves it alone", async (t) => {
  const newer = record('queued', 'run-b');
  const { code, after } = await runOn(newer, 'run-a');
  t.equal(code, 1);
  t.same(after, newer, "the newer run's record is unchanged");
});
