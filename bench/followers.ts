/**
 * SSE fan-out: 1,000 / 5,000 / 10,000 / 15,000 `stream_task` followers of 10 running Tasks (a log
 * line and a progress event every 0.5 s each), the service next to a bare uWS SSE server with the
 * same phasing (bench/servers/bare-sse.ts), in one run. Per size: log line → follower delay p50 /
 * p99 / max (lines stamped once every follower is open), peak RSS and CPU of the server process
 * over the window, scaled to 30 s. Target: 10,000 followers with p99 < 50 ms and CPU within 2x the
 * bare server.
 *
 * The followers are a C program on epoll (lib/sse-follow-client.c, compiled here with `cc`): the
 * Node client (lib/sse-followers.ts) spent most of a core parsing 10,000 streams on this 2-core
 * machine, beside the server it measured, and its own event-loop delay was in every latency.
 * Without a compiler, or with BENCH_FOLLOW_CLIENT=node, the Node client runs instead, and says so.
 *
 * BENCH_FOLLOWERS=1000,5000 picks sizes; BENCH_FOLLOW_WINDOW_S (default 30) the measured window;
 * BENCH_QUICK=1 is 10,000 followers over 15 s; BENCH_BASELINE_ROOT another build's package root
 * (with its dist/, e.g. the previous release) to measure too, size by size beside this one, so
 * both see the same machine; BENCH_PROFILE_DIR runs the service with `--cpu-prof` into that
 * directory. Alone: `node dist/bench/run-all.js followers` (about 12 minutes; quick: BENCH_QUICK=1).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../core/build-info.js';
import { startChildServer, type ChildServer } from './lib/child-server.js';
import { percentile } from './lib/load.js';
import { BENCH_TOKEN, startServiceProcess } from './lib/service-process.js';
import { ownCpuSeconds, processCpuSeconds } from '../harness/process-cpu.js';
import { buildFollowClient, followWindow, type FollowClientOptions, type FollowWindow } from './lib/sse-follow-client.js';
import { followAll } from './lib/sse-followers.js';
import { isMain, printTable } from './lib/table.js';

const QUICK = process.env['BENCH_QUICK'] === '1';
const SIZES = (process.env['BENCH_FOLLOWERS'] ?? (QUICK ? '10000' : '1000,5000,10000,15000')).split(',').map(Number);
const WINDOW_MS = Number(process.env['BENCH_FOLLOW_WINDOW_S'] ?? (QUICK ? 15 : 30)) * 1000;
const TASKS = 10;

interface Measured extends FollowWindow {
  rssMb: number;
  cpuPer30s: number;
  /**
   * Server CPU per log line delivered (each comes with a progress event): unlike CPU per 30 s, it
   * holds when the client, starved on a loaded machine, reads fewer lines than were written.
   */
  cpuUsPerLine: number;
}

/** Opens the followers and measures one window: the C client's path, or undefined for the Node client. */
type Client = string | undefined;

async function rssMb(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(text)?.[1] ?? 0) / 1024;
}

/** The Node client over one window, reported as the C client reports. */
async function followInNode(port: number, taskIds: string[], perTask: number, opts: FollowClientOptions): Promise<FollowWindow> {
  let cpuStart = 0;
  const stats = await followAll(port, BENCH_TOKEN, taskIds, perTask, {
    ...opts,
    onSteady: () => {
      cpuStart = ownCpuSeconds();
      opts.onSteady();
    },
  });
  const sorted = stats.latencies.sort((a, b) => a - b);
  const at = (p: number) => percentile(sorted, p);
  return { opened: stats.opened ?? 0, lines: stats.lines, timed: sorted.length, results: stats.results, errors: stats.errors, p50: at(50), p99: at(99), max: at(100), window_cpu_s: ownCpuSeconds() - cpuStart };
}

/** Opens the followers, then measures delivery, CPU and peak RSS of `server` over the window. */
async function measure(server: ChildServer, taskIds: string[], perTask: number, client: Client): Promise<Measured> {
  const pid = server.child.pid!;
  let cpuStart = 0;
  let peak = 0;
  let sampler: NodeJS.Timeout | undefined;
  const opts: FollowClientOptions = {
    windowMs: WINDOW_MS,
    concurrency: 200,
    openLimitMs: 120_000,
    sources: 1000,
    onSteady: () => {
      void processCpuSeconds(pid).then((s) => (cpuStart = s));
      sampler = setInterval(() => void rssMb(pid).then((r) => (peak = Math.max(peak, r))), 250);
    },
  };
  const stats = client ? await followWindow(client, server.port, BENCH_TOKEN, taskIds, perTask, opts) : await followInNode(server.port, taskIds, perTask, opts);
  const cpu = (await processCpuSeconds(pid)) - cpuStart;
  clearInterval(sampler);
  const m = { ...stats, rssMb: peak, cpuPer30s: (cpu * 30_000) / WINDOW_MS, cpuUsPerLine: stats.timed ? (cpu * 1e6) / stats.timed : NaN };
  console.error(`  ${taskIds[0]}…: ${stats.opened}/${taskIds.length * perTask} opened, ${JSON.stringify(m)}`);
  return m;
}

/** SIGTERM, then SIGKILL after 10 s: a server drowning in connections must not hang the bench. */
async function stopHard(server: ChildServer): Promise<void> {
  const killer = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
  await server.stop();
  clearTimeout(killer);
}

async function service(perTask: number, root: string | undefined, client: Client): Promise<Measured> {
  const profile = process.env['BENCH_PROFILE_DIR'];
  const svc = await startServiceProcess({ adapter: 'uws', ...(root ? { root } : {}), ...(profile ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profile}`] } : {}) });
  const auth = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };
  const call = async (name: string, args: Record<string, unknown>) =>
    ((await (await fetch(`${svc.url}/jobs/${name}`, { method: 'POST', headers: auth, body: JSON.stringify({ arguments: args }) })).json()) as { answer: { task_id: string } }).answer;
  try {
    const ids = await Promise.all(Array.from({ length: TASKS }, async () => (await call('submit', { task: 'sleep', seconds: 3600, steps: 7200 })).task_id));
    const m = await measure(svc, ids, perTask, client);
    await Promise.all(ids.map((task_id) => call('cancel', { task_id })));
    return m;
  } finally {
    await stopHard(svc);
    await svc.stop(); // removes the workspace
  }
}

async function bare(perTask: number, client: Client): Promise<Measured> {
  const server = await startChildServer(join(PACKAGE_ROOT, 'dist', 'bench', 'servers', 'bare-sse.js'));
  try {
    return await measure(server, Array.from({ length: TASKS }, (_, i) => `bare#${i}`), perTask, client);
  } finally {
    await stopHard(server);
  }
}

const cells = (m: Measured) => [`${m.p50.toFixed(1)} / ${m.p99.toFixed(1)} / ${m.max.toFixed(0)}`, m.rssMb.toFixed(0), m.cpuPer30s.toFixed(1), m.cpuUsPerLine.toFixed(1)];
const counts = (m: Measured) => [String(m.opened), m.timed, String(m.errors), ((m.window_cpu_s * 30_000) / WINDOW_MS).toFixed(1)];

/** The C client, built for this run; the Node client (undefined) without a compiler or when asked for. */
async function chooseClient(dir: string): Promise<Client> {
  if (process.env['BENCH_FOLLOW_CLIENT'] === 'node') {
    console.log('followers: the Node client, as asked (BENCH_FOLLOW_CLIENT=node): its own event-loop delay is in every latency');
    return undefined;
  }
  const built = await buildFollowClient(dir);
  if (typeof built === 'string') return built;
  console.log(`followers: the Node client instead of the C one (${built.message}): its own event-loop delay is in every latency`);
  return undefined;
}

export async function run(): Promise<void> {
  const baseline = process.env['BENCH_BASELINE_ROOT'];
  const rows: Array<Array<string | number>> = [];
  const verdicts: string[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-bench-followers-'));
  const client = await chooseClient(dir);
  try {
    for (const size of SIZES) {
      const before = baseline ? await service(size / TASKS, baseline, client) : undefined;
      const s = await service(size / TASKS, undefined, client);
      const b = await bare(size / TASKS, client);
      const times = (m: Measured) => [(m.cpuPer30s / b.cpuPer30s).toFixed(2), (m.cpuUsPerLine / b.cpuUsPerLine).toFixed(2)];
      if (before) rows.push([`${size} baseline`, ...cells(before), ...times(before), ...counts(before)]);
      rows.push([`${size} service`, ...cells(s), ...times(s), ...counts(s)]);
      rows.push([`${size} bare uWS SSE`, ...cells(b), '1.00', '1.00', ...counts(b)]);
      if (size === 10_000) {
        const ratio = s.cpuPer30s / b.cpuPer30s;
        const perLine = s.cpuUsPerLine / b.cpuUsPerLine;
        verdicts.push(
          `target at 10,000: p99 ${s.p99.toFixed(1)} ms (< 50: ${s.p99 < 50 ? 'met' : 'not met'}; the bare server in this run: ${b.p99.toFixed(1)} ms), ` +
            `CPU ${ratio.toFixed(2)}x bare per 30 s, ${perLine.toFixed(2)}x per line delivered (<= 2: ${Math.max(ratio, perLine) <= 2 ? 'met' : 'not met'})`,
        );
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  printTable(
    `SSE stream_task followers of ${TASKS} running Tasks, a log line + progress every 0.5 s each, ${client ? 'C epoll' : 'Node'} client; CPU over a ${WINDOW_MS / 1000} s window, per 30 s (target at 10,000: p99 < 50 ms, CPU within 2x bare)`,
    ['followers / server', 'p50 / p99 / max ms', 'peak RSS MB', 'CPU s per 30 s', 'CPU µs per line', 'CPU x bare', 'per line x bare', 'opened', 'lines timed', 'errors', 'client CPU s per 30 s'],
    rows,
  );
  for (const line of verdicts) console.log(line);
}

if (isMain(import.meta.url)) await run();
