/**
 * SSE fan-out: 1,000 / 5,000 / 10,000 / 15,000 `stream_task` followers of 10 running Tasks (a log
 * line and a progress event every 0.5 s each), the service next to a bare uWS SSE server with the
 * same phasing (bench/servers/bare-sse.ts), in one run. Per size: log line → follower delay p50 /
 * p99 (lines stamped once every follower is open), peak RSS and CPU of the server process over the
 * window, scaled to 30 s. Target: 10,000 followers with p99 < 50 ms and CPU within 2x the bare server.
 *
 * BENCH_FOLLOWERS=1000,5000 picks sizes; BENCH_FOLLOW_WINDOW_S (default 30) the measured window;
 * BENCH_BASELINE_ROOT another build's package root (with its dist/, e.g. the previous release) to
 * measure too, size by size beside this one, so both see the same machine;
 * BENCH_PROFILE_DIR runs the service with `--cpu-prof` into that directory. Alone:
 * `node dist/bench/run-all.js followers` (about 12 minutes; quick: BENCH_FOLLOWERS=10000 BENCH_FOLLOW_WINDOW_S=15).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../core/build-info.js';
import { startChildServer, type ChildServer } from './lib/child-server.js';
import { percentile } from './lib/load.js';
import { BENCH_TOKEN, startServiceProcess } from './lib/service-process.js';
import { processCpuSeconds } from './lib/process-cpu.js';
import { followAll } from './lib/sse-followers.js';
import { isMain, printTable } from './lib/table.js';

const SIZES = (process.env['BENCH_FOLLOWERS'] ?? '1000,5000,10000,15000').split(',').map(Number);
const WINDOW_MS = Number(process.env['BENCH_FOLLOW_WINDOW_S'] ?? 30) * 1000;
const TASKS = 10;

interface Measured {
  p50: number;
  p99: number;
  timed: number;
  errors: number;
  rssMb: number;
  cpuPer30s: number;
  /**
   * Server CPU per log line delivered (each comes with a progress event): unlike CPU per 30 s, it
   * holds when the client, starved on a loaded machine, reads fewer lines than were written.
   */
  cpuUsPerLine: number;
}

async function rssMb(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(text)?.[1] ?? 0) / 1024;
}

/** Opens the followers, then measures delivery, CPU and peak RSS of `server` over the window. */
async function measure(server: ChildServer, taskIds: string[], perTask: number): Promise<Measured> {
  const pid = server.child.pid!;
  let cpuStart = 0;
  let peak = 0;
  let sampler: NodeJS.Timeout | undefined;
  const stats = await followAll(server.port, BENCH_TOKEN, taskIds, perTask, {
    windowMs: WINDOW_MS,
    concurrency: 200,
    openLimitMs: 120_000,
    sources: 1000,
    onSteady: () => {
      void processCpuSeconds(pid).then((s) => (cpuStart = s));
      sampler = setInterval(() => void rssMb(pid).then((r) => (peak = Math.max(peak, r))), 250);
    },
  });
  const cpu = (await processCpuSeconds(pid)) - cpuStart;
  clearInterval(sampler);
  const sorted = stats.latencies.sort((a, b) => a - b);
  const m = { p50: percentile(sorted, 50), p99: percentile(sorted, 99), timed: sorted.length, errors: stats.errors, rssMb: peak, cpuPer30s: (cpu * 30_000) / WINDOW_MS, cpuUsPerLine: sorted.length ? (cpu * 1e6) / sorted.length : NaN };
  console.error(`  ${taskIds[0]}…: ${stats.opened}/${taskIds.length * perTask} opened, ${JSON.stringify(m)}`);
  return m;
}

/** SIGTERM, then SIGKILL after 10 s: a server drowning in connections must not hang the bench. */
async function stopHard(server: ChildServer): Promise<void> {
  const killer = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
  await server.stop();
  clearTimeout(killer);
}

async function service(perTask: number, root: string | undefined): Promise<Measured> {
  const profile = process.env['BENCH_PROFILE_DIR'];
  const svc = await startServiceProcess({ adapter: 'uws', ...(root ? { root } : {}), ...(profile ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profile}`] } : {}) });
  const auth = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };
  const call = async (name: string, args: Record<string, unknown>) =>
    ((await (await fetch(`${svc.url}/jobs/${name}`, { method: 'POST', headers: auth, body: JSON.stringify({ arguments: args }) })).json()) as { answer: { task_id: string } }).answer;
  try {
    const ids = await Promise.all(Array.from({ length: TASKS }, async () => (await call('submit', { task: 'sleep', seconds: 3600, steps: 7200 })).task_id));
    const m = await measure(svc, ids, perTask);
    await Promise.all(ids.map((task_id) => call('cancel', { task_id })));
    return m;
  } finally {
    await stopHard(svc);
    await svc.stop(); // removes the workspace
  }
}

async function bare(perTask: number): Promise<Measured> {
  const server = await startChildServer(join(PACKAGE_ROOT, 'dist', 'bench', 'servers', 'bare-sse.js'));
  try {
    return await measure(server, Array.from({ length: TASKS }, (_, i) => `bare#${i}`), perTask);
  } finally {
    await stopHard(server);
  }
}

const cells = (m: Measured) => [`${m.p50} / ${m.p99}`, m.rssMb.toFixed(0), m.cpuPer30s.toFixed(1), m.cpuUsPerLine.toFixed(1)];

export async function run(): Promise<void> {
  const baseline = process.env['BENCH_BASELINE_ROOT'];
  const rows: Array<Array<string | number>> = [];
  const verdicts: string[] = [];
  for (const size of SIZES) {
    const before = baseline ? await service(size / TASKS, baseline) : undefined;
    const s = await service(size / TASKS, undefined);
    const b = await bare(size / TASKS);
    const times = (m: Measured) => [(m.cpuPer30s / b.cpuPer30s).toFixed(2), (m.cpuUsPerLine / b.cpuUsPerLine).toFixed(2)];
    if (before) rows.push([`${size} baseline`, ...cells(before), ...times(before), before.timed, before.errors]);
    rows.push([`${size} service`, ...cells(s), ...times(s), s.timed, s.errors]);
    rows.push([`${size} bare uWS SSE`, ...cells(b), '1.00', '1.00', b.timed, b.errors]);
    if (size === 10_000) {
      const ratio = s.cpuPer30s / b.cpuPer30s;
      const perLine = s.cpuUsPerLine / b.cpuUsPerLine;
      verdicts.push(
        `target at 10,000: p99 ${s.p99} ms (< 50: ${s.p99 < 50 ? 'met' : 'not met'}; the bare server in this run: ${b.p99} ms), ` +
          `CPU ${ratio.toFixed(2)}x bare per 30 s, ${perLine.toFixed(2)}x per line delivered (<= 2: ${Math.max(ratio, perLine) <= 2 ? 'met' : 'not met'})`,
      );
    }
  }
  printTable(
    `SSE stream_task followers of ${TASKS} running Tasks, a log line + progress every 0.5 s each; CPU over a ${WINDOW_MS / 1000} s window, per 30 s (target at 10,000: p99 < 50 ms, CPU within 2x bare)`,
    ['followers / server', 'p50 / p99 ms', 'peak RSS MB', 'CPU s per 30 s', 'CPU µs per line', 'CPU x bare', 'per line x bare', 'lines timed', 'errors'],
    rows,
  );
  for (const line of verdicts) console.log(line);
}

if (isMain(import.meta.url)) await run();
