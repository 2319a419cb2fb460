/**
 * Tasks: submit→running and submit→succeeded (demo) next to a bare `node` spawn of an empty
 * script; sustained Tasks/s (500 stepped demos from 16 clients, each submitting then waiting) next
 * to a bare `node` spawn loop at the same concurrency and the CPU ceiling of this machine;
 * `status` and `list_task_statuses` with 10,000 records on disk next to the bare uWS hello-world;
 * 1,000 SSE `stream_task` followers of 10 running Tasks (log line → follower delay, service RSS).
 * Targets: issue 10: >= 150 Tasks/s and submit → running p50 <= 5 ms; list p50 < 20 ms; status
 * >= 50 % of bare uWS; follower p99 < 50 ms; RSS < 300 MB.
 * `TASKS=start node dist/bench/run-all.js tasks` runs the start latency and throughput part alone;
 * `TASKS_QUICK=1` makes it 200 submits and spawns instead of 500, without the plugin run;
 * `TASKS_ROOT=DIR` measures the service built in DIR (e.g. a scratch checkout of main) instead.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../core/build-info.js';
import { startChildServer } from './lib/child-server.js';
import { RawConnection, rawRequest, runLoad } from './lib/load.js';
import { processCpu } from '../harness/process-cpu.js';
import { BENCH_TOKEN, startServiceProcess, type ServiceProcess } from './lib/service-process.js';
import { followAll } from './lib/sse-followers.js';
import { isMain, printTable } from './lib/table.js';
import { writeDemoRecords } from './lib/task-records.js';
import { placeBenchPlugin } from './lib/bench-plugin.js';
import { stats, submitLatency, throughput, type CpuPerTask, type Throughput } from './lib/task-load.js';

const auth = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };

async function call<T>(svc: ServiceProcess, name: string, args: Record<string, unknown>): Promise<{ answer: T; success: boolean }> {
  const res = await fetch(`${svc.url}/jobs/${name}`, { method: 'POST', headers: auth, body: JSON.stringify({ arguments: args }) });
  return (await res.json()) as { answer: T; success: boolean };
}

interface Handle {
  task_id: string;
  run_id: string;
}

/** Wall time of a bare `node empty.js` (spawn to exit), with the environment as is and without extra CA certs. */
async function bareSpawn(count: number): Promise<{ asIs: number[]; noCa: number[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-spawn-'));
  const script = join(dir, 'empty.js');
  await writeFile(script, '');
  const once = (env: NodeJS.ProcessEnv) =>
    new Promise<number>((resolve) => {
      const start = performance.now();
      spawn(process.execPath, [script], { stdio: 'ignore', env }).once('exit', () => resolve(performance.now() - start));
    });
  const noCaEnv = { ...process.env };
  delete noCaEnv['NODE_EXTRA_CA_CERTS'];
  const asIs: number[] = [];
  const noCa: number[] = [];
  for (let i = 0; i < count; i++) {
    asIs.push(await once(process.env));
    noCa.push(await once(noCaEnv));
  }
  await rm(dir, { recursive: true, force: true });
  return { asIs, noCa };
}

/**
 * The floor of one process per Task: `clients` loops spawning `node -e` that writes a small file
 * (a Task's least work) and waiting for its exit, `total` in all. Answers the rate and the CPU
 * milliseconds of one such process.
 */
async function spawnLoop(total: number, clients: number, env: NodeJS.ProcessEnv = process.env): Promise<{ perSecond: number; cpuMs: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-spawn-'));
  const script = "require('fs').writeFileSync(process.argv[1], 'done')";
  let next = 0;
  const before = (await processCpu('self')).reaped;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < total) {
        const file = join(dir, `${next++}.txt`);
        // Detached, as runners are: each in a session (and scheduler autogroup) of its own.
        await new Promise((resolve) => spawn(process.execPath, ['-e', script, file], { stdio: 'ignore', env, detached: true }).once('exit', resolve));
      }
    }),
  );
  const perSecond = (total / (performance.now() - start)) * 1000;
  const cpuMs = (1000 * ((await processCpu('self')).reaped - before)) / total;
  await rm(dir, { recursive: true, force: true });
  return { perSecond, cpuMs };
}

export async function latencyAndThroughput(): Promise<void> {
  const quick = process.env['TASKS_QUICK'] === '1';
  const total = quick ? 200 : 500;
  const clients = 16;
  const cores = availableParallelism();
  const spawnTimes = await bareSpawn(20);
  // TASKS_ROOT: the service of another build (a scratch checkout of main), measured by this client.
  const root = process.env['TASKS_ROOT'];
  const svc = await startServiceProcess(root ? { root } : {});
  try {
    const { running, succeeded } = await submitLatency(svc, (i) => ({ task: 'demo', x: i, y: 1 }), 100);
    const spawnFloor = stats(spawnTimes.asIs);
    const rows: Array<Array<string | number>> = [
      ['bare node spawn, empty script, to exit (floor)', spawnFloor.p50, spawnFloor.p99, '1.00'],
      ['  same, without NODE_EXTRA_CA_CERTS', stats(spawnTimes.noCa).p50, stats(spawnTimes.noCa).p99, (stats(spawnTimes.noCa).p50 / spawnFloor.p50).toFixed(2)],
      ['demo submit → running (target p50 <= 5 ms)', stats(running).p50, stats(running).p99, (stats(running).p50 / spawnFloor.p50).toFixed(2)],
      ['demo submit → succeeded (wait_task answered)', stats(succeeded).p50, stats(succeeded).p99, (stats(succeeded).p50 / spawnFloor.p50).toFixed(2)],
    ];
    printTable('Task start latency, sequential, ms (target: submit → running p50 <= 5 ms)', ['measure', 'p50 ms', 'p99 ms', 'x spawn p50'], rows);
    const floor = await spawnLoop(total, clients);
    const noCaEnv = { ...process.env };
    delete noCaEnv['NODE_EXTRA_CA_CERTS'];
    const noCa = await spawnLoop(total, clients, noCaEnv);
    const t = await throughput(svc, (i) => ({ task: 'demo', x: i, y: 2 }), total, clients);
    const plugin = quick ? undefined : await pluginThroughput(total, clients);
    const ratio = (rate: number) => (rate / noCa.perSecond).toFixed(2);
    const throughputRow = (label: string, r: Throughput) => [label, r.perSecond, ratio(r.perSecond), `${r.succeeded}/${total}`, stats(r.running).p50, stats(r.running).p99];
    printTable(`Sustained throughput, ${total} submits from ${clients} clients, each submit + wait_task (target >= 150 Tasks/s)`, ['run', 'Tasks/s', 'x spawn loop', 'succeeded', 'submit→running p50 ms', 'p99 ms'], [
      [`bare node -e spawn loop writing a file, ${clients} at a time`, floor.perSecond, ratio(floor.perSecond), '', '', ''],
      ['  same without NODE_EXTRA_CA_CERTS (runners start without it: the floor)', noCa.perSecond, '1.00', '', '', ''],
      throughputRow('stepped demo', t),
      ...(plugin ? [throughputRow('  a plugin Task that returns at once', plugin)] : []),
    ]);
    // Where the CPU goes: the cores give at most cores x 1,000 CPU-ms a second, so the rate can be
    // no more than that divided by the CPU-ms per Task.
    const ceiling = (cpuMs: number) => ((cores * 1000) / cpuMs).toFixed(0);
    const cpuRow = (label: string, c: CpuPerTask) => {
      const sum = c.service + c.spawner + c.runners;
      return [label, c.service.toFixed(1), c.spawner.toFixed(1), c.runners.toFixed(1), sum.toFixed(1), ceiling(sum)];
    };
    printTable(`CPU per Task during that run, ms (${cores} cores: Tasks/s <= ${cores * 1000} / total)`, ['run', 'service', 'spawner', 'runners', 'total', 'ceiling Tasks/s'], [
      ['bare node -e writing a file, as configured', '', '', floor.cpuMs.toFixed(1), floor.cpuMs.toFixed(1), ceiling(floor.cpuMs)],
      ['bare node -e writing a file, without NODE_EXTRA_CA_CERTS', '', '', noCa.cpuMs.toFixed(1), noCa.cpuMs.toFixed(1), ceiling(noCa.cpuMs)],
      cpuRow('stepped demo', t.cpu),
      ...(plugin ? [cpuRow('plugin Task that returns at once', plugin.cpu)] : []),
    ]);
  } finally {
    await svc.stop();
  }
}

/** A plugin with one Task that does nothing: what a run of plugin code costs beyond a built-in. */
const NOOP_PLUGIN = `import { defineTask } from 'taskyard/task';
export default [defineTask({ name: 'noop', taskType: 'bench', description: 'Returns at once; measures the cost of a plugin Task run.', input: { type: 'object', properties: {} }, output: { type: 'object', properties: {} }, run: () => ({}) })];
`;

async function pluginThroughput(total: number, clients: number): Promise<Throughput> {
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-plugin-'));
  await placeBenchPlugin(workspace, 'bench-noop', NOOP_PLUGIN);
  const svc = await startServiceProcess({ workspace });
  try {
    return await throughput(svc, () => ({ task: 'noop' }), total, clients);
  } finally {
    await svc.stop();
    await rm(workspace, { recursive: true, force: true });
  }
}

export async function manyRecords(): Promise<void> {
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-records-'));
  const ids = writeDemoRecords(workspace, 10_000);
  const bare = await startChildServer(join(PACKAGE_ROOT, 'dist', 'bench', 'servers', 'bare-uws.js'));
  const floor = await runLoad({ port: bare.port, request: rawRequest('GET', '/health'), connections: 100, durationMs: 4000 });
  await bare.stop();
  const started = performance.now();
  const svc = await startServiceProcess({ workspace });
  const startup = performance.now() - started;
  try {
    const status = await runLoad({ port: svc.port, request: rawRequest('POST', '/jobs/status', auth, JSON.stringify({ arguments: { task_id: ids[5000] } })), connections: 100, durationMs: 4000 });
    const version = await runLoad({ port: svc.port, request: rawRequest('POST', '/jobs/version', auth, '{"arguments":{}}'), connections: 100, durationMs: 4000 });
    const listed = (await call<unknown[]>(svc, 'list_task_statuses', {})).answer;
    if (listed.length !== 10_000) throw new Error(`listed ${listed.length} statuses`);
    // Time to the last byte of the answer (the client's JSON.parse of ~5 MB is not the service's
    // cost), on a raw keep-alive connection: fetch's own handling of 5 MB varied by 10 ms.
    const list: number[] = [];
    const conn = await RawConnection.open(svc.port);
    const listRequest = rawRequest('POST', '/jobs/list_task_statuses', auth, '{"arguments":{}}');
    for (let i = 0; i < 23; i++) {
      const t0 = performance.now();
      const res = await conn.request(listRequest);
      if (res.status !== 200 || res.body.length < 1_000_000) throw new Error(`list_task_statuses answered ${res.status}, ${res.body.length} bytes`);
      if (i >= 3) list.push(performance.now() - t0);
    }
    conn.close();
    printTable('10,000 records on disk (targets: list p50 < 20 ms; status >= 50 % of bare uWS)', ['measure', 'req/s', 'p50 ms', 'p99 ms', '% of bare uWS'], [
      ['bare uWS hello-world, 100 connections (floor)', floor.rps, floor.p50, floor.p99, '100 %'],
      ['version Job, 100 connections (the Job path floor)', version.rps, version.p50, version.p99, `${((100 * version.rps) / floor.rps).toFixed(0)} %`],
      ['status, 100 connections', status.rps, status.p50, status.p99, `${((100 * status.rps) / floor.rps).toFixed(0)} %`],
      ['list_task_statuses (10,000 items, ~5 MB), sequential, to last byte', 1000 / stats(list).p50, stats(list).p50, stats(list).p99, ''],
      ['service start with the one scan (ms)', '', startup, '', ''],
    ]);
  } finally {
    await svc.stop();
    await rm(workspace, { recursive: true, force: true });
  }
}

async function rssOf(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(text)?.[1] ?? 0) / 1024;
}

const FOLLOW_STEPS = 20;

export async function followers(adapter: 'uws' | 'node'): Promise<Array<Array<string | number>>> {
  const svc = await startServiceProcess({ adapter });
  try {
    const handles = await Promise.all(Array.from({ length: 10 }, () => call<Handle>(svc, 'submit', { task: 'sleep', seconds: FOLLOW_STEPS / 2, steps: FOLLOW_STEPS })));
    let peak = await rssOf(svc.child.pid!);
    const sampler = setInterval(() => void rssOf(svc.child.pid!).then((r) => (peak = Math.max(peak, r))), 250);
    const result = await followAll(svc.port, BENCH_TOKEN, handles.map((h) => h.answer.task_id), 100);
    clearInterval(sampler);
    const s = stats(result.latencies);
    return [[`${adapter} front end`, `${result.lines}/${10 * FOLLOW_STEPS * 100}`, result.latencies.length, s.p50, s.p99, `${result.results} / ${result.errors}`, peak]];
  } finally {
    await svc.stop();
  }
}

/** TASKS=start,records,followers runs only those parts (all by default). */
export async function run(): Promise<void> {
  const only = process.env['TASKS']?.split(',');
  if (!only || only.includes('start')) await latencyAndThroughput();
  if (!only || only.includes('records')) await manyRecords();
  if (only && !only.includes('followers')) return;
  const rows = [...(await followers('uws')), ...(await followers('node'))];
  printTable('1,000 SSE stream_task followers of 10 running Tasks, a log line every 0.5 s (targets: p99 < 50 ms, RSS < 300 MB)', ['service', 'lines delivered', 'timed (all open)', 'write→follower p50 ms', 'p99 ms', 'results / errors', 'peak RSS MB'], rows);
}

if (isMain(import.meta.url)) await run();
