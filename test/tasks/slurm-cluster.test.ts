import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { TaskRuns } from '../../schemas/task-runs.js';
import { clusterUnavailable, startSlurmCluster } from '../helpers/slurm-cluster.js';
import { runCli } from '../helpers/run-cli.js';
import { exited, startServiceProcess } from '../helpers/service-process.js';
import { startTestService, waitFor, type TestService } from '../helpers/service.js';
import { makeWorkspace, statusOf, submitOk, waitState, waitTask, writeFixturePlugin, type Handle } from './task-helpers.js';

/** Tasks for the cluster: one that runs until told, one that asks for a GPU and says where it ran. */
const CLUSTER_TASKS = `
import { existsSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { defineTask } from 'taskyard/task';
const base = { taskType: 'cluster', input: { type: 'object', properties: {} }, output: { type: 'object', properties: {} } };
export default [
  defineTask({
    ...base,
    name: 'until-file',
    description: 'Runs until a file named finish appears in its directory.',
    async run() {
      while (!existsSync('finish')) await delay(100);
      return {};
    },
  }),
  defineTask({
    ...base,
    name: 'gpu-where',
    description: 'Asks for one GPU; answers the node it ran on and the GPU Slurm gave it.',
    resources: { gpus: 1 },
    output: { type: 'object', properties: { node: { type: 'string' }, cuda: { type: 'string' } } },
    async run() {
      return { node: String(process.env.SLURMD_NODENAME), cuda: String(process.env.CUDA_VISIBLE_DEVICES) };
    },
  }),
];
`;

/** The node a run's log names on its first line (the job script writes it). */
const LOGGED_NODE = /^taskyard: Slurm job (\d+) on node (\S+)$/m;

const reason = clusterUnavailable();
if (reason) {
  t.test('the multi-node Slurm tests', { skip: reason }, () => undefined);
} else {
  const cluster = await startSlurmCluster(t, 3);
  // --exclusive: a job holds a whole node, so runs side by side land on different nodes.
  const executor = { kind: 'slurm', sbatch_args: ['--exclusive'] };
  const config = { executor, environment: { SLURM_CONF: cluster.conf } };
  const serviceOn = async (t: Test, extra: Record<string, unknown> = {}) => {
    const workspace = await makeWorkspace(t);
    await writeFixturePlugin(workspace, { name: 'cluster-fixture', tasks: CLUSTER_TASKS });
    return startTestService(t, { workspace, config: { ...config, ...extra } });
  };
  const svc = await serviceOn(t);
  const dirOf = (workspace: string, h: Handle) => join(workspace, h.task_id.split('#')[0]!, h.task_id);
  const logOf = async (service: TestService, taskId: string, path?: string) =>
    path ? readFile(join(service.workspace, path), 'utf8') : (await service.call('read_task_log', { task_id: taskId, offset: 0 })).body.answer.content as string;
  /** The job and node the current run's log names, once its job started. */
  const placed = (workspace: string, h: Handle) => {
    const log = join(dirOf(workspace, h), 'task.log');
    return waitFor(async () => LOGGED_NODE.exec(await readFile(log, 'utf8').catch(() => '')), 30_000, `the log of ${h.task_id} to name its node`).then((m) => ({ job: m[1]!, node: m[2]! }));
  };
  const finish = (workspace: string, handles: Handle[]) => Promise.all(handles.map((h) => writeFile(join(dirOf(workspace, h), 'finish'), '')));
  /** Jobs Slurm requeues after a node failure; until-file retried once on node_fail. */
  const requeuingConfig = {
    ...config,
    executor: { ...executor, sbatch_args: [...executor.sbatch_args, '--requeue'] },
    tasks: { 'until-file': { retries: { max: 1, on: ['node_fail'] } } },
  };
  const runsOf = async (service: TestService, taskId: string) => (await service.call('get_task_runs', { task_id: taskId })).body.answer as TaskRuns;

  t.test('three runs at once land on the three nodes; each log names its job and node', async (t) => {
    const handles = await Promise.all([0, 1, 2].map(() => submitOk(t, svc, { task: 'until-file' })));
    const where = await Promise.all(handles.map((h) => placed(svc.workspace, h)));
    t.same(new Set(where.map((w) => w.node)), new Set(cluster.nodes), 'one run on each node');
    for (const w of where) t.equal(await cluster.nodeOf(w.job), w.node, `squeue agrees: job ${w.job} runs on ${w.node}`);
    await finish(svc.workspace, handles);
    const ends = await Promise.all(handles.map((h) => waitTask(svc, h)));
    t.same(ends.map((e) => e.status.state), ['succeeded', 'succeeded', 'succeeded']);
  });

  t.test('a GPU request becomes --gres=gpu:1 and runs on the node that has GPUs', async (t) => {
    const run = await submitOk(t, svc, { task: 'gpu-where' });
    const done = await waitTask(svc, run);
    t.equal(done.status.state, 'succeeded', done.status.error);
    // --exclusive gives the job the whole node, both GPUs included.
    t.match(done.status.result, { node: cluster.nodes.at(-1), cuda: /^[01](,[01])?$/ }, 'on the GPU node, with its GPUs visible');
    const job = JSON.parse(await readFile(join(dirOf(svc.workspace, run), 'slurm_job.json'), 'utf8')) as { job_id: string };
    t.match(await cluster.run('squeue', ['-h', '-t', 'all', '-j', job.job_id, '-o', '%b']), /gpu:1/, 'the job asked Slurm for gres gpu:1');
  });

  t.test('a node that dies mid-run fails the Task with NODE_FAIL, with a consistent record', async (t) => {
    const run = await submitOk(t, svc, { task: 'until-file' });
    await waitState(svc, run.task_id, 'running', 30_000);
    const { job, node } = await placed(svc.workspace, run);
    t.teardown(() => cluster.startNode(node));
    const killed = Date.now();
    await cluster.killNode(node);
    // SlurmdTimeout=6: slurmctld takes the node for DOWN 6-12 s after its last answer.
    const done = await waitTask(svc, run);
    const took = Date.now() - killed;
    t.equal(done.status.state, 'failed');
    t.match(done.status.error, new RegExp(`^RuntimeError: Slurm job ${job} ended NODE_FAIL`), "Slurm's reason");
    t.ok(took < 60_000, `failed within the cluster's timeout (${took} ms)`);
    t.equal(done.status.run_id, run.run_id);
    t.match(await logOf(svc, run.task_id), `on node ${node}`, 'the log is readable and names the node');
    const streamed = await svc.events('stream_task', { task_id: run.task_id, poll_interval: 0.1 });
    t.match(JSON.stringify(streamed.events.at(-1)), /"failed"/, 'stream_task ends with the failed status');
    t.same((await runsOf(svc, run.task_id)).runs.map((r) => r.state), ['failed'], 'one run, failed');
  });

  t.test("with --requeue, Slurm's requeue after a node failure gives the Task a new run; the old one is recorded", async (t) => {
    const requeuing = await serviceOn(t, requeuingConfig);
    const run = await submitOk(t, requeuing, { task: 'until-file' });
    const first = await placed(requeuing.workspace, run);
    t.teardown(() => cluster.startNode(first.node));
    await cluster.killNode(first.node);
    const runs = await waitFor(async () => {
      const shown = await runsOf(requeuing, run.task_id);
      return shown.runs.length === 2 ? shown : null;
    }, 60_000, 'a second run');
    t.match(runs.runs[0], { run_id: run.run_id, state: 'failed', error: new RegExp(`Slurm requeued job ${first.job} .*NODE_FAIL`), retry: { cause: 'node_fail' } }, 'the first run, recorded');
    const second = await placed(requeuing.workspace, { ...run, run_id: runs.runs[1]!.run_id });
    t.not(second.node, first.node, 'the new run runs on a live node');
    t.match(await logOf(requeuing, run.task_id, runs.runs[0]!.log_path), `Slurm job ${first.job} on node ${first.node}`, "the first run's log is kept with it");
    await finish(requeuing.workspace, [run]);
    const done = await waitTask(requeuing, run);
    t.equal(done.status.state, 'succeeded');
    t.equal((await cluster.run('squeue', ['-h', '-t', 'all', '-j', first.job, '-o', '%T'])).trim(), 'CANCELLED', 'the requeued job was cancelled: it never ran the old run again');
  });

  t.test('a job Slurm requeued while no service ran: the next service gives the Task a new run, the old one recorded', async (t) => {
    const workspace = await makeWorkspace(t);
    await writeFixturePlugin(workspace, { name: 'cluster-fixture', tasks: CLUSTER_TASKS });
    const configFile = join(workspace, 'config.json');
    await writeFile(configFile, JSON.stringify(requeuingConfig));
    const gone = await startServiceProcess(t, workspace, { config: configFile });
    const run = (await gone.call('submit', { task: 'until-file' })).answer as Handle;
    const first = await placed(workspace, run);
    gone.child.kill('SIGKILL');
    await exited(gone.child);
    t.teardown(() => cluster.startNode(first.node));
    await cluster.killNode(first.node);
    // Slurm holds a requeued job back a while (BeginTime) before it starts it again.
    await waitFor(async () => (await cluster.run('squeue', ['-h', '-j', first.job, '-o', '%T'])).trim() === 'PENDING', 60_000, `job ${first.job} to be requeued`);
    const next = await startTestService(t, { workspace, config: requeuingConfig });
    const runs = await waitFor(async () => {
      const shown = await runsOf(next, run.task_id);
      return shown.runs.length === 2 ? shown : null;
    }, 60_000, 'a second run');
    t.match(runs.runs[0], { run_id: run.run_id, state: 'failed', error: new RegExp(`Slurm requeued job ${first.job} `), retry: { cause: 'node_fail' } }, 'the first run, recorded');
    t.not((await placed(workspace, { ...run, run_id: runs.runs[1]!.run_id })).node, first.node, 'the new run runs on a live node');
    await finish(workspace, [run]);
    t.equal((await waitTask(next, run)).status.state, 'succeeded');
    t.equal((await cluster.run('squeue', ['-h', '-t', 'all', '-j', first.job, '-o', '%T'])).trim(), 'CANCELLED', 'the requeued job was cancelled');
  });

  t.test('a service restarted (kill -9) while jobs run on several nodes (and one waits) adopts them all; they end correctly', async (t) => {
    const workspace = await makeWorkspace(t);
    await writeFixturePlugin(workspace, { name: 'cluster-fixture', tasks: CLUSTER_TASKS });
    const configFile = join(workspace, 'config.json');
    await writeFile(configFile, JSON.stringify(config));
    const first = await startServiceProcess(t, workspace, { config: configFile });
    const handles = await Promise.all([0, 1, 2].map(async () => (await first.call('submit', { task: 'until-file' })).answer as Handle));
    const where = await Promise.all(handles.map((h) => placed(workspace, h)));
    t.equal(new Set(where.map((w) => w.node)).size, 3, 'on three nodes');
    // A fourth waits in Slurm's queue for a free node: adopted while pending, it is not taken for requeued.
    const queued = (await first.call('submit', { task: 'until-file' })).answer as Handle;
    const queuedJob = await waitFor(async () => (JSON.parse(await readFile(join(dirOf(workspace, queued), 'slurm_job.json'), 'utf8').catch(() => '{}')) as { job_id?: string }).job_id, 30_000, 'the fourth job');
    await waitFor(async () => (await cluster.run('squeue', ['-h', '-j', queuedJob, '-o', '%T'])).trim() === 'PENDING', 30_000, 'the fourth job to wait');
    handles.push(queued);
    first.child.kill('SIGKILL');
    await exited(first.child);
    const second = await startTestService(t, { workspace, config });
    for (const h of handles.slice(0, 3)) t.equal((await statusOf(second, h.task_id)).state, 'running', `${h.task_id} still running under the new service`);
    await finish(workspace, handles);
    const ends = await Promise.all(handles.map((h) => waitTask(second, h)));
    t.same(ends.map((e) => [e.status.state, e.status.run_id]), handles.map((h) => ['succeeded', h.run_id]));
  });

  t.test('taskyard run --gpus 1 -- python3 train.py on Slurm is one batch job on the GPU node; its output is in the log', async (t) => {
    const home = await mkdtemp(join(tmpdir(), 'taskyard-cluster-home-'));
    t.teardown(() => rm(home, { recursive: true, force: true }));
    const script = join(svc.workspace, 'train.py');
    await writeFile(script, 'import os\nprint("epoch 1 loss 0.5", flush=True)\nprint("ran in job " + os.environ["SLURM_JOB_ID"] + " with GPU " + os.environ["CUDA_VISIBLE_DEVICES"])\n');
    const ran = await runCli(['run', '--task-name', 'train', '--gpus', '1', '--', 'python3', script], { HOME: home, TASKYARD_URL: svc.url, TASKYARD_TOKEN: svc.token ?? '' });
    t.equal(ran.code, 0, ran.stderr);
    t.match(ran.stdout, /^epoch 1 loss 0\.5$/m, 'the CLI shows the output');
    const log = await logOf(svc, 'command#command#train');
    const [, job, node] = LOGGED_NODE.exec(log) ?? [];
    t.equal(node, cluster.nodes.at(-1), '--gpus 1 ran it on the GPU node');
    t.match(log, new RegExp(`epoch 1 loss 0\\.5\\nran in job ${job} with GPU [01]`), 'the log holds the output, from the one job');
    const status = await statusOf(svc, 'command#command#train');
    const jobs = await cluster.run('squeue', ['-h', '-t', 'all', `--name=command#command#train@${status.run_id}`, '-o', '%i %T']);
    t.equal(jobs.trim(), `${job} COMPLETED`, 'one batch job, completed');
  });
}
