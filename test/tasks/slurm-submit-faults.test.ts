import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { lyingSlurm } from '../helpers/lying-slurm.js';
import { startSlurm, slurmUnavailable } from '../helpers/slurm.js';
import { startTestService, waitFor } from '../helpers/service.js';
import { exited, startServiceProcess } from '../helpers/service-process.js';
import { makeWorkspace, submitOk, waitTask } from './task-helpers.js';

/**
 * Faults around one submit to Slurm (issue 33): an sbatch that never answers, a job file that
 * cannot be written, and a service killed between sbatch and its job file. A real one-node
 * cluster for every test; the service's `sbatch` runs the real one, then does what the test
 * asked (helpers/lying-slurm.ts), so the job really is queued each time.
 */

const reason = slurmUnavailable();
if (reason) {
  t.comment(`skipping the Slurm tests: ${reason}`);
  t.pass('skipped');
} else {
  const cluster = await startSlurm(t, 2);
  const fake = await lyingSlurm(t);
  const noFault = () => fake.truth('sbatch');
  const config = { executor: { kind: 'slurm', sbatch_timeout_s: 2 }, environment: { SLURM_CONF: cluster.conf, PATH: fake.path } };
  const shared = await makeWorkspace(t);
  const svc = await startTestService(t, { workspace: shared, config });

  /** The states of the jobs named `<task_id>@<run_id>`, from the real squeue. */
  const jobsNamed = async (taskId: string, runId: string) =>
    (await cluster.run('squeue', ['-h', '-t', 'all', '-o', '%j|%T'])).split('\n').filter((line) => line.startsWith(`${taskId}@${runId}|`)).map((line) => line.split('|')[1]);
  const onDisk = async (workspace: string, taskId: string) => JSON.parse(await readFile(join(workspace, taskId.split('#')[0]!, taskId, 'status.json'), 'utf8')) as { state: string; run_id: string };

  const refusedStarts = [
    {
      fault: 'hang',
      what: 'an sbatch that does not answer: killed after executor.sbatch_timeout_s, its job cancelled by name, the run failed',
      error: /^RuntimeError: the task runner could not start: sbatch did not answer within 2 s \(is slurmctld up\?\); any job named \S+ was cancelled$/,
      cancelled: 'the job sbatch queued is cancelled: nothing is left queued',
    },
    {
      fault: 'block-job-file',
      what: 'a job file that cannot be written: the job is cancelled by name, the run fails with the reason',
      error: /^RuntimeError: the task runner could not start: writing slurm_job\.json failed \(E\w+: .*\); any job named \S+ was cancelled$/,
      cancelled: 'the job is cancelled: it cannot run unfollowed',
    },
  ] as const;
  for (const { fault, what, error, cancelled } of refusedStarts) {
    t.test(what, async (t) => {
      t.teardown(noFault);
      await fake.lie('sbatch', fault);
      const sleep = await submitOk(t, svc, { task: 'sleep', seconds: 60 });
      const done = await waitTask(svc, sleep);
      t.equal(done.status.state, 'failed');
      t.match(done.status.error, error);
      t.same(await jobsNamed(sleep.task_id, sleep.run_id), ['CANCELLED'], cancelled);
      t.equal((await onDisk(shared, sleep.task_id)).state, 'failed', 'nothing ran to write over the failed record');
    });
  }

  t.test('a service killed between sbatch and writing slurm_job.json: the next one finds the job by its name and adopts it', async (t) => {
    t.teardown(noFault);
    const workspace = await makeWorkspace(t);
    const dir = await mkdtemp(join(tmpdir(), 'taskyard-slurm-config-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'service.yaml');
    await writeFile(file, JSON.stringify({ ...config, service: { gpus: 0 } }));
    const first = await startServiceProcess(t, workspace, { config: file });
    await fake.lie('sbatch', 'kill-service');
    // The service dies inside the submit (sbatch's parent is the service): the call may get no answer.
    await first.call('submit', { task: 'sleep', seconds: 1, task_name: 'by-name' }).catch(() => undefined);
    await exited(first.child);
    t.equal(first.child.signalCode, 'SIGKILL', 'the fake sbatch killed the service after queuing the job');
    await noFault();
    const type = (await readdir(workspace)).find((name) => !name.startsWith('.'))!;
    const taskId = (await readdir(join(workspace, type))).find((name) => name.endsWith('#by-name'))!;
    const left = await onDisk(workspace, taskId);
    t.equal(left.state, 'queued', 'the record was left queued');
    await t.rejects(readFile(join(workspace, type, taskId, 'slurm_job.json')), { code: 'ENOENT' }, 'without a job file');
    t.equal((await jobsNamed(taskId, left.run_id)).length, 1, 'while Slurm has its job');
    const second = await startTestService(t, { workspace, config });
    const done = await waitTask(second, { task_id: taskId, run_id: left.run_id } as Parameters<typeof waitTask>[1]);
    t.equal(done.status.state, 'succeeded', `the adopted run completes normally: ${JSON.stringify(done.status.error)}`);
    const job = JSON.parse(await readFile(join(workspace, type, taskId, 'slurm_job.json'), 'utf8')) as { job_id: string; run_id: string };
    t.equal(job.run_id, left.run_id, 'the adopting service wrote the job file');
    t.equal(await waitFor(async () => (await cluster.run('squeue', ['-h', '-t', 'all', '-j', job.job_id, '-o', '%T'])).trim() === 'COMPLETED' || null, 20_000, 'the job to complete'), true, 'the job it names is the one that ran');
  });
}
