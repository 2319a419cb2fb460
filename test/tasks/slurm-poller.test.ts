import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { waitFor } from '../helpers/wait-for.js';
import { SlurmJobPoller } from '../../supervisor/tasks/engines/slurm-job-poller.js';
import { SlurmCliTransport } from '../../supervisor/tasks/engines/slurm-cli-transport.js';
import { WatchedJob } from '../../supervisor/tasks/engines/slurm-watched-job.js';
import type { RunnerEnd } from '../../supervisor/tasks/engines/executor.js';

/**
 * The adoption bound, without a cluster: Slurm commands that answer as a controller that is down
 * does (small shell scripts first on the poller's PATH, logging their calls), and a bound of 1 s
 * instead of ADOPT_WAIT_MS.
 */

const DOWN = 'slurm_load_jobs error: Unable to contact slurm controller (connect failure)';

async function downController(t: Test): Promise<{ env: NodeJS.ProcessEnv; calls(command: string): Promise<string[]> }> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-slurm-down-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  for (const command of ['squeue', 'scontrol', 'scancel', 'sbatch']) {
    await writeFile(join(dir, command), `#!/bin/sh\necho "$*" >> '${dir}/${command}.calls'\necho '${DOWN}' >&2\nexit 1\n`, { mode: 0o755 });
  }
  return {
    env: { ...process.env, PATH: `${dir}:${process.env['PATH'] ?? '/usr/bin:/bin'}` },
    calls: async (command) => (await readFile(join(dir, `${command}.calls`), 'utf8').catch(() => '')).split('\n').filter(Boolean),
  };
}

t.test('adopted runs wait for a controller that does not answer, then are settled as lost after the bound and scancelled', async (t) => {
  const slurm = await downController(t);
  const logged: string[] = [];
  const log = console.error;
  console.error = (...args: unknown[]) => void logged.push(args.map(String).join(' '));
  t.teardown(() => void (console.error = log));
  const poller = new SlurmJobPoller(new SlurmCliTransport({ config: { kind: 'slurm', sbatch_args: [] }, env: slurm.env, scratch: '/nonexistent' }), 1000);
  t.teardown(() => poller.close());
  const adopted = new WatchedJob('7', '/nonexistent', 'r7', Date.now());
  const submitted = new WatchedJob('8', '/nonexistent', 'r8', null);
  const ends = new Map<string, RunnerEnd>();
  for (const job of [adopted, submitted]) {
    void job.ended.then((end) => ends.set(job.jobId, end));
    poller.watch(job);
  }
  await waitFor(async () => (await slurm.calls('squeue')).length >= 1, 10_000, 'the first squeue');
  t.equal(ends.size, 0, 'nothing ends while the controller is silent within the bound');
  const end = await adopted.ended;
  t.same(end, { kind: 'engine-ended', reason: 'worker lost: the Slurm controller did not answer within 1 s of this service adopting job 7' });
  t.same(await slurm.calls('scancel'), ['7'], 'the job of the run given up was scancelled (in case it runs on)');
  t.same(logged.filter((line) => line.includes('waiting for the Slurm controller to adopt 2 runs')).length, 0, 'only adopted runs are counted');
  t.equal(logged.filter((line) => line.includes('waiting for the Slurm controller to adopt 1 runs; they are settled as lost if it does not answer within 1 s')).length, 1, 'one line says why the service waits');
  const rounds = (await slurm.calls('squeue')).length;
  await waitFor(async () => (await slurm.calls('squeue')).length >= rounds + 1, 20_000, 'another squeue round');
  t.equal(ends.has('8'), false, 'a run submitted here has no bound: it waits for the controller');
  poller.close();
  t.same(await submitted.ended, { kind: 'lost', pid: null }, 'until the service stops');
});
