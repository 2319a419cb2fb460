/**
 * Tasks through Slurm next to the local executor, in one run (issue 14):
 * - submit → running: the run's `created_at` → `started_at` (both written by the service and the
 *   runner), for Tasks submitted one at a time;
 * - sustained Tasks/s: 40 `demo` Tasks submitted at once, until all are terminal;
 * - where the time goes on Slurm: `sbatch` and `squeue` alone, and a batch job that does nothing
 *   (scheduler + node) measured from sbatch to its end.
 * - at cluster scale (issue 30, bench/slurm-scale.ts): the watch's CPU with 0 and 1,000 foreign
 *   jobs, submit p50 and rate slurmrestd vs sbatch, and 500 Tasks at once until all are queued.
 * Slurm is a one-node cluster brought up by scripts/slurm-up.sh (scheduler tuned:
 * batch_sched_delay=0, sched_min_interval=0), with 2 declared CPUs, and slurmrestd (JWT over TCP)
 * where it is installed.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PACKAGE_ROOT } from '../core/build-info.js';
import { percentile } from './lib/load.js';
import { BENCH_TOKEN, startServiceProcess, type ServiceProcess } from './lib/service-process.js';
import { isMain, printTable } from './lib/table.js';
import { closedPort } from '../harness/http-server.js';
import { burst, partition, submitRates, watchCost, type Cluster } from './slurm-scale.js';

const exec = promisify(execFile);
const SEQUENTIAL = 10;
const BURST = 40;

async function call<T>(svc: ServiceProcess, name: string, args: Record<string, unknown>): Promise<T> {
  const res = await fetch(`${svc.url}/jobs/${name}`, { method: 'POST', headers: { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
  return ((await res.json()) as { answer: T }).answer;
}

interface Status {
  state: string;
  created_at: string;
  started_at: string | null;
  error: string;
}

async function submitAndWait(svc: ServiceProcess, x: number): Promise<Status> {
  const handle = await call<{ task_id: string; run_id: string }>(svc, 'submit', { task: 'demo', x, y: 1 });
  return call<Status>(svc, 'wait_task', { task_id: handle.task_id, run_id: handle.run_id, poll_interval: 0.05 });
}

/** One executor: submit → running of sequential Tasks, and Tasks/s of a burst. */
async function measure(label: string, config: string): Promise<Array<string | number>> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-bench-slurm-'));
  await writeFile(join(dir, 'config.yaml'), config);
  const svc = await startServiceProcess({ args: ['--config', join(dir, 'config.yaml')] });
  try {
    await submitAndWait(svc, 0); // warm-up
    const latencies: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) {
      const s = await submitAndWait(svc, i);
      if (s.state !== 'succeeded') throw new Error(`${label}: a run ${s.state}: ${s.error}`);
      latencies.push(Date.parse(s.started_at!) - Date.parse(s.created_at));
    }
    const t0 = performance.now();
    const ends = await Promise.all(Array.from({ length: BURST }, (_, i) => submitAndWait(svc, i)));
    const seconds = (performance.now() - t0) / 1000;
    const failed = ends.filter((s) => s.state !== 'succeeded').length;
    latencies.sort((a, b) => a - b);
    return [label, `${percentile(latencies, 50).toFixed(0)} ms`, `${percentile(latencies, 90).toFixed(0)} ms`, `${(BURST / seconds).toFixed(1)}${failed ? ` (${failed} failed)` : ''}`];
  } finally {
    await svc.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function timed(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; stdout: string }> {
  const t0 = performance.now();
  const { stdout } = await exec(command, args, { env });
  return { ms: performance.now() - t0, stdout };
}

/** sbatch and squeue alone, and an empty job from sbatch to its end (scheduler + node). */
async function breakdown(conf: string, scratch: string): Promise<Array<Array<string | number>>> {
  const env = { ...process.env, SLURM_CONF: conf };
  const script = join(scratch, 'empty.sh');
  await writeFile(script, '#!/bin/sh\nexec true\n', { mode: 0o755 });
  const sbatch: number[] = [];
  const squeue: number[] = [];
  const job: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t0 = performance.now();
    const submitted = await timed('sbatch', ['--parsable', `--output=${join(scratch, 'empty.log')}`, script], env);
    sbatch.push(submitted.ms);
    const id = submitted.stdout.trim();
    for (;;) {
      const q = await timed('squeue', ['-h', '-t', 'all', '-j', id, '-o', '%T'], env);
      squeue.push(q.ms);
      if (q.stdout.trim() === 'COMPLETED') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    job.push(performance.now() - t0);
  }
  const median = (xs: number[]) => `${percentile([...xs].sort((a, b) => a - b), 50).toFixed(0)} ms`;
  return [
    ['sbatch alone', median(sbatch)],
    ['squeue alone', median(squeue)],
    ['empty job: sbatch → COMPLETED (scheduler + node + squeue poll of 20 ms)', median(job)],
  ];
}

export async function run(): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), 'taskyard-bench-cluster-'));
  const scripts = join(PACKAGE_ROOT, 'scripts');
  try {
    const rest = await exec('sh', ['-c', 'command -v slurmrestd']).then(() => true, () => false);
    const restPort = await closedPort();
    const ports = { SLURMCTLD_PORT: String(await closedPort()), SLURMD_PORT: String(await closedPort()), SLURMRESTD_PORT: String(restPort) };
    const up = await exec(join(scripts, 'slurm-up.sh'), [scratch, '2'], { env: { ...process.env, ...ports, SLURM_REST: rest ? '1' : '0' } }).catch((err: Error) => err);
    if (up instanceof Error) {
      console.log(`bench/slurm: skipped, the cluster did not come up: ${up.message.split('\n').slice(0, 2).join(' ')}`);
      return;
    }
    const conf = join(scratch, 'slurm.conf');
    const rows = [
      await measure('local executor (runner pool 2)', 'service:\n  runner_pool_size: 2\n'),
      await measure('slurm executor (1 node, 2 CPUs)', `executor:\n  kind: slurm\nenvironment:\n  SLURM_CONF: ${conf}\n`),
    ];
    printTable(`Tasks through each executor (${SEQUENTIAL} sequential demo runs, then ${BURST} at once)`, ['executor', 'submit → running p50', 'p90', 'Tasks/s (burst)'], rows);
    printTable('Where the time goes on Slurm', ['step', 'median'], await breakdown(conf, scratch));
    if (!rest) {
      console.log('bench/slurm: the cluster-scale part is skipped: slurmrestd is not installed (apt-get install slurmrestd slurm-wlm-jwt-plugin)');
      return;
    }
    const cluster: Cluster = { conf, scratch, rest: { url: `http://127.0.0.1:${restPort}`, token_file: join(scratch, 'rest.token') } };
    await partition(cluster, 'DOWN');
    printTable('The watch\'s CPU: the service following 20 pending jobs, over 10 s (target: flat in foreign jobs)', ['transport', 'foreign jobs', 'service CPU', 'its children (squeue)'], await watchCost(cluster));
    printTable('Submits through each transport (100 one at a time, then 200 at once; target: slurmrestd p50 ≤ 10 ms)', ['transport', 'submit p50', 'p90', 'rate'], await submitRates(cluster));
    printTable('500 Tasks submitted at once over HTTP (target: all queued in ≤ 5 s)', ['transport', 'all submits answered', 'all queued in Slurm', 'rate'], await burst(cluster));
    await partition(cluster, 'UP');
  } finally {
    await exec(join(scripts, 'slurm-down.sh'), [scratch]).catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) await run();
