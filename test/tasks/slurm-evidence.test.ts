import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { startSlurm, slurmUnavailable } from '../helpers/slurm.js';
import { lyingSlurm } from '../helpers/lying-slurm.js';
import { startTestService, waitFor } from '../helpers/service.js';
import { ABSENT_GRACE_MS } from '../../supervisor/tasks/engines/slurm-watched-job.js';
import { makeWorkspace, statusOf, submitOk, waitState, waitTask, type Handle } from './task-helpers.js';

/**
 * Slurm answers that lie (issue 33): a real one-node cluster, and Slurm commands on the service's
 * PATH that run the real ones except while a test tells one to lie, so the real job runs on.
 */

const reason = slurmUnavailable();
if (reason) {
  t.comment(`skipping the Slurm tests: ${reason}`);
  t.pass('skipped');
} else {
  const cluster = await startSlurm(t, 2);
  const fake = await lyingSlurm(t);
  const workspace = await makeWorkspace(t);
  const config = { executor: { kind: 'slurm' }, environment: { SLURM_CONF: cluster.conf, PATH: fake.path } };
  const svc = await startTestService(t, { workspace, config });
  const dirOf = (h: Handle, root = workspace) => join(root, h.task_id.split('#')[0]!, h.task_id);
  const onDisk = async (h: Handle, root = workspace) => JSON.parse(await readFile(join(dirOf(h, root), 'status.json'), 'utf8')) as { state: string; run_id: string };
  const jobOf = (h: Handle, root = workspace) =>
    waitFor(async () => {
      const job = JSON.parse(await readFile(join(dirOf(h, root), 'slurm_job.json'), 'utf8').catch(() => '{}')) as { job_id?: string; run_id?: string };
      return job.run_id === h.run_id ? job.job_id : null;
    }, 10_000, `the Slurm job of ${h.task_id}`);
  // The real squeue (the test's own PATH), never the fake one.
  const squeue = async (jobId: string) => (await cluster.run('squeue', ['-h', '-t', 'all', '-j', jobId, '-o', '%T'])).trim();
  const settles = (jobId: string, state: string) => waitFor(async () => (await squeue(jobId)) === state, 20_000, `job ${jobId} to be ${state}`).then(() => state);

  t.test('squeue answering without a live job does not end its run: it stays active and ends as its runner says', async (t) => {
    const sleep = await submitOk(t, svc, { task: 'sleep', seconds: 8, steps: 4, task_name: 'lied-about' });
    await waitState(svc, sleep.task_id, 'running', 20_000);
    const job = await jobOf(sleep);
    t.teardown(() => fake.truth('squeue'));
    await fake.lie('squeue', 'garbled');
    const before = await fake.lies('squeue');
    // Four lies, or the run ended on fewer (then nothing polls any more).
    const state = await waitFor(async () => {
      const { state } = await statusOf(svc, sleep.task_id);
      return state !== 'running' || (await fake.lies('squeue')) >= before + 4 ? state : null;
    }, 15_000, 'four squeue answers without the job');
    t.equal(state, 'running', 'still running after four squeue answers without its job');
    const lied = await fake.lies('squeue');
    const clash = await svc.call('submit', { task: 'sleep', seconds: 0, task_name: 'lied-about' });
    t.match(clash.body.answer, /^FileExistsError: /, 'a fixed-name submit is refused: the Task is still active');
    t.same((await svc.call('delete_tasks', { task_ids: [sleep.task_id] })).body.answer, [], 'delete_tasks skips it');
    t.equal(await squeue(job), 'RUNNING', 'as the job is');
    const done = await waitTask(svc, sleep);
    t.equal(done.status.state, 'succeeded', `the run ends as its runner wrote: ${JSON.stringify(done.status.error)}`);
    t.same([(await onDisk(sleep)).state, (await onDisk(sleep)).run_id], ['succeeded', sleep.run_id], 'the service agrees with the disk');
    t.ok((await fake.lies('squeue')) > lied, 'squeue was asked again and lied until the end');
    t.equal(await settles(job, 'COMPLETED'), 'COMPLETED');
  });

  t.test('a job squeue and scontrol both deny is settled failed after the grace period, and cancelled in Slurm', async (t) => {
    const sleep = await submitOk(t, svc, { task: 'sleep', seconds: 300 });
    await waitState(svc, sleep.task_id, 'running', 20_000);
    const job = await jobOf(sleep);
    t.teardown(() => Promise.all([fake.truth('squeue'), fake.truth('scontrol')]));
    await fake.lie('scontrol', 'unknown');
    await fake.lie('squeue', 'empty');
    const denied = Date.now();
    const done = await waitTask(svc, sleep);
    t.equal(done.status.state, 'failed');
    t.match(done.status.error, new RegExp(`^RuntimeError: Slurm no longer knows job ${job}`));
    t.ok(Date.now() - denied >= ABSENT_GRACE_MS, `not before the grace period (${Date.now() - denied} ms)`);
    t.ok((await fake.lies('scontrol')) >= 1, 'scontrol was asked before the run was given up');
    t.equal(await settles(job, 'CANCELLED'), 'CANCELLED', 'the service cancelled the job of the run it settled');
    t.equal((await onDisk(sleep)).state, 'failed', 'and nothing wrote over the failed record');
  });

  t.test('sbatch printing a banner and `Submitted batch job N`: the job id is found, the run succeeds', async (t) => {
    t.teardown(() => fake.truth('sbatch'));
    await fake.lie('sbatch', 'banner');
    const demo = await submitOk(t, svc, { task: 'demo', x: 2, y: 3 });
    const done = await waitTask(svc, demo);
    t.equal(done.status.state, 'succeeded', `succeeded: ${JSON.stringify(done.status.error)}`);
    t.equal((done.status['result'] as { result: number }).result, 5);
    t.equal(await fake.lies('sbatch'), 1, 'sbatch printed the banner');
    t.equal(await settles(await jobOf(demo), 'COMPLETED'), 'COMPLETED', 'slurm_job.json names the job that ran');
  });

  t.test('sbatch queuing a job without printing its id: the run fails and the job is cancelled by its name', async (t) => {
    t.teardown(() => fake.truth('sbatch'));
    await fake.lie('sbatch', 'no-id');
    const sleep = await submitOk(t, svc, { task: 'sleep', seconds: 30 });
    const done = await waitTask(svc, sleep);
    t.equal(done.status.state, 'failed');
    t.match(done.status.error, /^RuntimeError: the task runner could not start: sbatch printed no job id: "Welcome to the test cluster\. Your job is on its way\."; any job named \S+ was cancelled$/);
    // The job sbatch queued, found by its name (it starts with the Task ID) in the real squeue.
    const ofThisTask = async () => (await cluster.run('squeue', ['-h', '-t', 'all', '-o', '%j|%T'])).split('\n').filter((line) => line.startsWith(`${sleep.task_id}`));
    t.equal((await ofThisTask()).length, 1, 'sbatch did queue one job');
    const states = await waitFor(async () => {
      const lines = await ofThisTask();
      return lines.every((line) => line.endsWith('|CANCELLED')) ? lines : null;
    }, 20_000, `the job of ${sleep.task_id} to be cancelled (${(await ofThisTask()).join(', ')})`);
    t.match(states[0], new RegExp(`@${sleep.run_id}\\|CANCELLED$`), 'the job name holds the run id: unique to this run');
    t.equal((await onDisk(sleep)).state, 'failed', 'nothing ran to write over the failed record');
  });

  t.test('a restart while slurmctld is down: the new service waits for the controller, then adopts the run', async (t) => {
    const logged: string[] = [];
    const log = console.error;
    console.error = (...args: unknown[]) => {
      logged.push(args.map(String).join(' '));
      log(...args);
    };
    t.teardown(() => void (console.error = log));
    // A workspace of its own: the shared one is locked by the shared service.
    const workspace = await makeWorkspace(t);
    const first = await startTestService(t, { workspace, config });
    const sleep = await submitOk(t, first, { task: 'sleep', seconds: 20, steps: 4 });
    await waitState(first, sleep.task_id, 'running', 20_000);
    const job = await jobOf(sleep, workspace);
    await first.close();
    await cluster.stopController();
    let down = true;
    t.teardown(() => (down ? cluster.startController() : undefined));
    const second = await startTestService(t, { workspace, config });
    t.equal((await statusOf(second, sleep.task_id)).state, 'running', 'not settled while the controller is down');
    await waitFor(() => logged.find((line) => line.includes('waiting for the Slurm controller to adopt 1 runs')), 30_000, 'the line that says the service waits');
    t.equal((await statusOf(second, sleep.task_id)).state, 'running', 'still running once squeue failed');
    await cluster.startController();
    down = false;
    const done = await waitTask(second, sleep);
    t.equal(done.status.state, 'succeeded', `succeeded: ${JSON.stringify(done.status.error)}`);
    t.equal(await settles(job, 'COMPLETED'), 'COMPLETED');
  });
}
