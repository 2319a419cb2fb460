import { readFile, writeFile } from 'node:fs/promises';
import { createConnection, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startSlurm, slurmRestUnavailable, type SlurmCluster } from '../helpers/slurm.js';
import { startTestService, waitFor, type TestService } from '../helpers/service.js';
import { makeWorkspace, submitOk, waitState, waitTask, writeFixturePlugin, type Handle } from './task-helpers.js';

/**
 * The Slurm executor through slurmrestd (issue 30): submit, wait_task and cancel over HTTP with
 * `executor.rest` configured, against a one-node cluster whose slurmrestd takes JWT over TCP;
 * a burst of submits while slurmctld restarts (both transports); a submit whose answer is lost.
 */

const TASKS = `
import { existsSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { defineTask } from 'taskyard/task';
const base = { taskType: 'slurm', input: { type: 'object', properties: {} } };
export default [
  defineTask({
    ...base,
    name: 'show-env',
    description: 'Answers its whole environment and working directory.',
    output: { type: 'object', properties: { env: { type: 'string' }, cwd: { type: 'string' } } },
    async run() {
      return { env: JSON.stringify(process.env), cwd: process.cwd() };
    },
  }),
  defineTask({
    ...base,
    name: 'until-file',
    description: 'Runs until a file named finish appears in its directory.',
    output: { type: 'object', properties: {} },
    async run() {
      while (!existsSync('finish')) await delay(100);
      return {};
    },
  }),
];
`;

const reason = slurmRestUnavailable();
if (reason) {
  t.test('the slurmrestd tests', { skip: reason }, () => undefined);
} else {
  const cluster = await startSlurm(t, 4, { rest: true });
  const rest = cluster.rest!;
  const token = (await readFile(rest.token_file, 'utf8')).trim();
  const environment = { SLURM_CONF: cluster.conf, TASKYARD_PROBE: 'a,b,c d', SLURM_JWT: 'planted-service-token' };
  const serviceOn = async (t: Test, executor: Record<string, unknown>): Promise<{ svc: TestService; workspace: string }> => {
    const workspace = await makeWorkspace(t);
    await writeFixturePlugin(workspace, { name: 'slurm-rest-fixture', tasks: TASKS });
    return { svc: await startTestService(t, { workspace, config: { executor: { kind: 'slurm', ...executor }, environment } }), workspace };
  };
  const jobsNamed = async (h: Handle) =>
    (await cluster.run('squeue', ['-h', '-t', 'all', '-o', '%j|%i|%T'])).split('\n').filter((line) => line.startsWith(`${h.task_id}@${h.run_id}|`)).map((line) => line.split('|')[2]!);
  const jobFile = (workspace: string, h: Handle) => join(workspace, h.task_id.split('#')[0]!, h.task_id, 'slurm_job.json');
  const jobOf = (workspace: string, h: Handle) =>
    waitFor(async () => {
      const job = JSON.parse(await readFile(jobFile(workspace, h), 'utf8').catch(() => '{}')) as { job_id?: string; run_id?: string };
      return job.run_id === h.run_id ? job.job_id : null;
    }, 15_000, `the Slurm job of ${h.task_id}`);
  const squeue = async (jobId: string) => (await cluster.run('squeue', ['-h', '-t', 'all', '-j', jobId, '-o', '%T'])).trim();

  t.test('through slurmrestd: a Task runs as a Slurm job; its environment keeps commas and holds no token; cancel ends it', async (t) => {
    const { svc, workspace } = await serviceOn(t, { rest });
    const env = await submitOk(t, svc, { task: 'show-env' });
    const done = await waitTask(svc, env);
    t.equal(done.status.state, 'succeeded', `show-env succeeded: ${JSON.stringify(done.status.error)}`);
    const result = done.status['result'] as { env: string; cwd: string };
    const jobEnv = JSON.parse(result.env) as Record<string, string>;
    t.equal(jobEnv['TASKYARD_PROBE'], 'a,b,c d', 'the environment goes as an object: commas survive');
    t.ok(jobEnv['SLURM_JOB_ID'], 'it ran as a Slurm job');
    const envJob = await jobOf(workspace, env);
    // The record is terminal as soon as the runner writes it; Slurm may show COMPLETING a moment longer.
    t.equal(await waitFor(async () => ((await squeue(envJob)) === 'COMPLETED' ? 'COMPLETED' : null), 15_000, 'the job to complete'), 'COMPLETED', 'Slurm shows the job completed');
    t.equal(result.cwd, join(workspace, 'slurm', env.task_id), 'the job works in the Task directory');
    t.notOk(result.env.includes(token), "the REST token is not in the job's environment");
    t.notOk(result.env.includes('planted-service-token'), 'nor SLURM_JWT from the service environment');

    const long = await submitOk(t, svc, { task: 'until-file' });
    const job = await jobOf(workspace, long);
    await waitFor(async () => (await squeue(job)) === 'RUNNING', 20_000, 'the job to run');
    t.equal((await svc.call('cancel', { task_id: long.task_id })).body.answer, true, 'cancel answers true');
    t.equal((await waitTask(svc, long)).status.state, 'cancelled');
    t.equal(await waitFor(async () => ((await squeue(job)) === 'CANCELLED' ? 'CANCELLED' : null), 15_000, 'the job to be cancelled'), 'CANCELLED', 'DELETE job/{id} cancelled the Slurm job');
  });

  t.test('through slurmrestd: a service restart during a run; the new service adopts the job and follows it to its end', async (t) => {
    const workspace = await makeWorkspace(t);
    await writeFixturePlugin(workspace, { name: 'slurm-rest-fixture', tasks: TASKS });
    const config = { executor: { kind: 'slurm', rest }, environment };
    const first = await startTestService(t, { workspace, config });
    const run = await submitOk(t, first, { task: 'until-file' });
    await waitState(first, run.task_id, 'running', 20_000);
    const job = await jobOf(workspace, run);
    await first.close();
    const second = await startTestService(t, { workspace, config });
    t.equal((await waitState(second, run.task_id, 'running')).state, 'running', 'still running under the new service');
    await writeFile(join(workspace, 'slurm', run.task_id, 'finish'), '');
    t.equal((await waitTask(second, run)).status.state, 'succeeded');
    t.equal(await waitFor(async () => ((await squeue(job)) === 'COMPLETED' ? 'COMPLETED' : null), 15_000, 'the job to complete'), 'COMPLETED', 'the adopted job is the one that ran');
  });

  t.test('through slurmrestd on a unix socket: a Task runs', async (t) => {
    // A socket in front of slurmrestd's TCP port (the cluster's slurmrestd takes JWT over TCP).
    const path = join(cluster.dir, 'slurmrestd.socket');
    const upstream = new URL(rest.url);
    const sockets = new Set<Socket>();
    const forward = createServer((client) => {
      const server = createConnection(Number(upstream.port), upstream.hostname);
      sockets.add(client).add(server);
      client.pipe(server).pipe(client);
      for (const socket of [client, server]) socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => forward.listen(path, resolve));
    t.teardown(() => {
      for (const socket of sockets) socket.destroy();
      forward.close();
    });
    const { svc } = await serviceOn(t, { rest: { socket: path, token_file: rest.token_file } });
    const done = await waitTask(svc, await submitOk(t, svc, { task: 'show-env' }));
    t.equal(done.status.state, 'succeeded', `show-env succeeded over the socket: ${JSON.stringify(done.status.error)}`);
    t.ok(sockets.size > 0, 'the service went through the socket');
  });

  for (const transport of ['rest', 'cli'] as const) {
    t.test(`${transport}: a burst of submits while slurmctld restarts: each Task has exactly one Slurm job, or failed with none left`, async (t) => {
      const { svc } = await serviceOn(t, transport === 'rest' ? { rest, sbatch_timeout_s: 30 } : { sbatch_timeout_s: 30 });
      await cluster.stopController();
      let restarted = false;
      t.teardown(async () => void (restarted || (await cluster.startController())));
      // Every submit below starts while the controller is down: the transport must wait it out or fail cleanly.
      const handles = await Promise.all(Array.from({ length: 12 }, () => submitOk(t, svc, { task: 'sleep', seconds: 0.2 })));
      await cluster.startController();
      restarted = true;
      const ends = await Promise.all(handles.map((h) => waitTask(svc, h)));
      let succeeded = 0;
      for (const [i, h] of handles.entries()) {
        const jobs = await jobsNamed(h);
        const state = ends[i]!.status.state;
        if (state === 'succeeded') {
          succeeded++;
          // Its record is terminal once the runner wrote it: Slurm may still show the job RUNNING or COMPLETING.
          t.equal(jobs.length, 1, `${h.task_id} succeeded with exactly one job (${jobs.join(', ')})`);
        } else {
          t.equal(state, 'failed', `${h.task_id} either succeeded or failed: ${JSON.stringify(ends[i]!.status.error)}`);
          t.ok(jobs.every((s) => s === 'CANCELLED'), `${h.task_id} failed and left no live job (${jobs.join(', ')})`);
        }
      }
      t.equal(succeeded, handles.length, 'a brief outage within sbatch_timeout_s loses no submit');
    });
  }

  t.test('rest: a submit whose answer is lost on the way back fails cleanly: its job is found by name and cancelled', async (t) => {
    // A proxy in front of slurmrestd that drops the connection once slurmrestd answered a submit.
    const upstream = new URL(rest.url);
    const sockets = new Set<Socket>();
    const proxy = createServer((client) => {
      const server = createConnection(Number(upstream.port), upstream.hostname);
      sockets.add(client).add(server);
      let submitting = false;
      client.on('data', (chunk) => {
        if (chunk.toString('latin1').startsWith('POST /slurm/v0.0.38/job/submit')) submitting = true;
        server.write(chunk);
      });
      server.on('data', (chunk) => (submitting ? (client.destroy(), server.destroy()) : client.write(chunk)));
      for (const socket of [client, server]) socket.on('error', () => undefined).on('close', () => (client.destroy(), server.destroy()));
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    t.teardown(() => {
      for (const socket of sockets) socket.destroy();
      proxy.close();
    });
    const { svc, workspace } = await serviceOn(t, { rest: { ...rest, url: `http://127.0.0.1:${(proxy.address() as { port: number }).port}` } });
    const sleep = await submitOk(t, svc, { task: 'sleep', seconds: 60 });
    const done = await waitTask(svc, sleep);
    t.equal(done.status.state, 'failed');
    t.match(done.status.error, /^RuntimeError: the task runner could not start: slurmrestd at http:\/\/127\.0\.0\.1:\d+ did not answer POST \/slurm\/v0\.0\.38\/job\/submit \(\w+\); any job named \S+ was cancelled$/);
    t.same(await jobsNamed(sleep), ['CANCELLED'], 'the job slurmrestd queued was cancelled: nothing is left to run');
    await t.rejects(readFile(jobFile(workspace, sleep)), { code: 'ENOENT' }, 'no job file names it');
    t.equal((await waitState(svc, sleep.task_id, 'failed')).state, 'failed', 'the record stays failed');
  });
}
