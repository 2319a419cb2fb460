/**
 * Slurm at cluster scale (issue 30), run by bench/slurm.ts on its one-node cluster with slurmrestd:
 * - submit p50 / p90 and submit rate, slurmrestd vs the commands, through the executor's own
 *   transports (bounded in flight: 8 requests, 4 sbatch processes);
 * - 500 Tasks submitted at once over HTTP until Slurm lists all 500 jobs queued;
 * - the watch's CPU: the service's process CPU over a fixed interval while it follows 20 pending
 *   jobs, with 0 and then 1,000 foreign jobs (held, another name) in the queue.
 * The partition is set DOWN while it runs, so jobs stay queued and the numbers are the service's
 * and the controller's, not the node's.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { SlurmRestSection } from '../schemas/config.js';
import { SlurmCliTransport } from '../supervisor/tasks/engines/slurm-cli-transport.js';
import { SlurmRestClient } from '../supervisor/tasks/engines/slurm-rest-client.js';
import { SlurmRestTransport } from '../supervisor/tasks/engines/slurm-rest-transport.js';
import { Bounded, type SlurmTransport } from '../supervisor/tasks/engines/slurm-transport.js';
import { percentile } from './lib/load.js';
import { BENCH_TOKEN, startServiceProcess, type ServiceProcess } from './lib/service-process.js';

const exec = promisify(execFile);
const SEQUENTIAL = 100;
const PARALLEL = 200;
const BURST = 500;
const WATCHED = 20;
const FOREIGN = 1000;
const CPU_WINDOW_MS = 10_000;
/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS = 100;

type Transport = 'rest' | 'cli';

/** The cluster the bench brought up, with its slurmrestd. */
export interface Cluster {
  readonly conf: string;
  readonly scratch: string;
  readonly rest: SlurmRestSection;
}

const env = (cluster: Cluster) => ({ ...process.env, SLURM_CONF: cluster.conf });
const slurm = async (cluster: Cluster, command: string, args: string[]) => (await exec(command, args, { env: env(cluster), maxBuffer: 64 * 1024 * 1024 })).stdout;
const ms = (xs: number[], p: number) => `${percentile([...xs].sort((a, b) => a - b), p).toFixed(1)} ms`;

/** Jobs stay queued (a DOWN partition accepts jobs and starts none); UP again at the end. */
export async function partition(cluster: Cluster, state: 'DOWN' | 'UP'): Promise<void> {
  await slurm(cluster, 'scontrol', ['update', 'PartitionName=main', `State=${state}`]);
}

/** Cancels every job of this user (the bench's own cluster) and waits until none is pending. */
async function cancelAll(cluster: Cluster): Promise<void> {
  await slurm(cluster, 'scancel', ['--me']);
  const deadline = Date.now() + 60_000;
  while ((await slurm(cluster, 'squeue', ['-h', '--me', '-t', 'PENDING,RUNNING', '-o', '%i'])).trim() !== '') {
    if (Date.now() > deadline) throw new Error('bench/slurm: jobs were still queued 60 s after scancel --me');
    await delay(200);
  }
}

function transportOf(cluster: Cluster, kind: Transport): SlurmTransport {
  const config = { kind: 'slurm' as const, sbatch_args: [] };
  return kind === 'rest' ? new SlurmRestTransport(cluster.rest, config) : new SlurmCliTransport({ config, env: env(cluster), scratch: join(cluster.scratch, 'bench-submit') });
}

/** Submit latency one at a time, then the rate of PARALLEL submitted together, through one transport. */
export async function submitRates(cluster: Cluster): Promise<Array<Array<string | number>>> {
  const rows: Array<Array<string | number>> = [];
  for (const kind of ['rest', 'cli'] as const) {
    const transport = transportOf(cluster, kind);
    const job = (i: number) => ({ jobName: `bench-submit@${kind}${i}`, cwd: cluster.scratch, logFile: join(cluster.scratch, 'bench.log'), script: '#!/bin/sh\nexec true\n', env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' }, resources: {}, runId: `${kind}${i}` });
    try {
      await transport.submit(job(-1)); // warm-up: the version check, a connection
      const latencies: number[] = [];
      for (let i = 0; i < SEQUENTIAL; i++) {
        const t0 = performance.now();
        await transport.submit(job(i));
        latencies.push(performance.now() - t0);
      }
      const t0 = performance.now();
      await Promise.all(Array.from({ length: PARALLEL }, (_, i) => transport.submit(job(SEQUENTIAL + i))));
      const rate = PARALLEL / ((performance.now() - t0) / 1000);
      rows.push([kind === 'rest' ? 'slurmrestd (keep-alive, 8 in flight)' : 'sbatch (4 at once)', ms(latencies, 50), ms(latencies, 90), `${rate.toFixed(0)}/s`]);
    } finally {
      transport.close();
      await cancelAll(cluster);
    }
  }
  return rows;
}

async function call<T>(svc: ServiceProcess, name: string, args: Record<string, unknown>): Promise<T> {
  const res = await fetch(`${svc.url}/jobs/${name}`, { method: 'POST', headers: { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
  return ((await res.json()) as { answer: T }).answer;
}

async function serviceOn(cluster: Cluster, kind: Transport): Promise<{ svc: ServiceProcess; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-bench-scale-'));
  const rest = kind === 'rest' ? `  rest:\n    url: ${cluster.rest.url}\n    token_file: ${cluster.rest.token_file}\n` : '';
  await writeFile(join(dir, 'config.yaml'), `executor:\n  kind: slurm\n${rest}environment:\n  SLURM_CONF: ${cluster.conf}\n`);
  return { svc: await startServiceProcess({ args: ['--config', join(dir, 'config.yaml')] }), dir };
}

/** The service's jobs Slurm lists as pending (their names are `<task_id>@<run_id>`). */
async function pendingOfService(cluster: Cluster): Promise<number> {
  return (await slurm(cluster, 'squeue', ['-h', '--me', '-t', 'PENDING', '-o', '%j'])).split('\n').filter((name) => name.includes('#demo#')).length;
}

/** BURST demo Tasks submitted at once over HTTP: seconds until the submits answered, and until Slurm lists all queued. */
export async function burst(cluster: Cluster): Promise<Array<Array<string | number>>> {
  const rows: Array<Array<string | number>> = [];
  for (const kind of ['rest', 'cli'] as const) {
    const { svc, dir } = await serviceOn(cluster, kind);
    try {
      const t0 = performance.now();
      await Promise.all(Array.from({ length: BURST }, (_, i) => call(svc, 'submit', { task: 'demo', x: i, y: 1 })));
      const answered = (performance.now() - t0) / 1000;
      console.error(`bench/slurm: ${kind}: ${BURST} submits answered in ${answered.toFixed(2)} s`);
      const deadline = Date.now() + 300_000;
      while ((await pendingOfService(cluster)) < BURST && Date.now() < deadline) await delay(100);
      const queued = (performance.now() - t0) / 1000;
      const all = await pendingOfService(cluster);
      rows.push([kind === 'rest' ? 'slurmrestd' : 'sbatch', `${answered.toFixed(2)} s`, all < BURST ? `only ${all} queued after 300 s` : `${queued.toFixed(2)} s`, `${(BURST / queued).toFixed(0)}/s`]);
    } finally {
      await svc.stop();
      await rm(dir, { recursive: true, force: true });
      await cancelAll(cluster);
    }
  }
  return rows;
}

/** utime + stime, and the children's (squeue, sbatch) the process waited for, in ms. */
async function cpuOf(pid: number): Promise<{ own: number; children: number }> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /, '').split(' ').map(Number);
  // After the command: state is field 3, utime 14, stime 15, cutime 16, cstime 17 (1-based): here 11..14.
  return { own: ((fields[11]! + fields[12]!) * 1000) / TICKS, children: ((fields[13]! + fields[14]!) * 1000) / TICKS };
}

/** The service's CPU over CPU_WINDOW_MS while it follows WATCHED pending jobs. */
async function watchCpu(cluster: Cluster, kind: Transport): Promise<{ own: number; children: number }> {
  const { svc, dir } = await serviceOn(cluster, kind);
  try {
    await Promise.all(Array.from({ length: WATCHED }, (_, i) => call(svc, 'submit', { task: 'demo', x: i, y: 1 })));
    const deadline = Date.now() + 120_000;
    while ((await pendingOfService(cluster)) < WATCHED) {
      if (Date.now() > deadline) throw new Error(`bench/slurm: ${kind}: the ${WATCHED} jobs were not queued within 120 s`);
      await delay(100);
    }
    const pid = svc.child.pid!;
    const before = await cpuOf(pid);
    await delay(CPU_WINDOW_MS);
    const after = await cpuOf(pid);
    return { own: after.own - before.own, children: after.children - before.children };
  } finally {
    await svc.stop();
    await rm(dir, { recursive: true, force: true });
    const names = await serviceJobNames(cluster);
    if (names.length > 0) await slurm(cluster, 'scancel', ['--me', `--name=${names.join(',')}`]);
  }
}

/** The names of the service's jobs still listed (demo Tasks), to cancel them and not the foreign ones. */
async function serviceJobNames(cluster: Cluster): Promise<string[]> {
  return (await slurm(cluster, 'squeue', ['-h', '--me', '-t', 'PENDING', '-o', '%j'])).split('\n').filter((name) => name.includes('#demo#'));
}

/** FOREIGN held jobs by another name, submitted through slurmrestd (8 in flight: a few seconds). */
async function addForeign(cluster: Cluster): Promise<void> {
  const client = new SlurmRestClient(cluster.rest);
  const bounded = new Bounded(8);
  try {
    const body = { script: '#!/bin/sh\nexec true\n', job: { name: 'foreign', hold: true, current_working_directory: cluster.scratch, environment: { PATH: '/usr/bin:/bin' } } };
    await Promise.all(Array.from({ length: FOREIGN }, () => bounded.run(() => client.request('POST', '/slurm/v0.0.38/job/submit', 30_000, body))));
  } finally {
    client.close();
  }
}

/** The watch's CPU per second of the interval, for each transport, with 0 and FOREIGN foreign jobs queued. */
export async function watchCost(cluster: Cluster): Promise<Array<Array<string | number>>> {
  const rows: Array<Array<string | number>> = [];
  for (const foreign of [0, FOREIGN]) {
    if (foreign > 0) await addForeign(cluster);
    for (const kind of ['rest', 'cli'] as const) {
      const cpu = await watchCpu(cluster, kind);
      const perSecond = (x: number) => `${((x * 1000) / CPU_WINDOW_MS).toFixed(1)} ms/s`;
      rows.push([kind === 'rest' ? 'slurmrestd (GET job/{id} each)' : 'squeue --me (one list)', foreign, perSecond(cpu.own), perSecond(cpu.children)]);
    }
  }
  await slurm(cluster, 'scancel', ['--me', '--name=foreign']).catch(() => undefined);
  return rows;
}
