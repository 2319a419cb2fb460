/**
 * Machine history sampling bench: what one sample costs with the hand-written /proc readers the
 * service uses (supervisor/machine/cpu-usage.ts, memory-info.ts, process-usage.ts) against the
 * npm packages DESIGN.md names, `systeminformation` (machine: currentLoad + mem; processes:
 * processes()) and `pidusage` (the tree's pids, found by a /proc pass, then pidusage(pids)),
 * all measured in one run on one machine. For each: wall time per sample (p50, mean) and CPU
 * time per sample (this process plus the child processes it reaped, e.g. `ps`).
 * Run: `node dist/bench/machine-sampling.js` (after `npm run build`).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { readCpuTimes, usageBetween } from '../supervisor/machine/cpu-usage.js';
import { readMemory } from '../supervisor/machine/memory-info.js';
import { ProcessScanner, readProcessUsages, readProcUnits, TreeUsageMeter } from '../supervisor/machine/process-usage.js';
import { treeOf } from '../workers/process-tree.js';
import { isMain, printTable } from './lib/table.js';
import { setTimeout as delay } from 'node:timers/promises';

const require = createRequire(import.meta.url);
const si = require('systeminformation') as typeof import('systeminformation');
interface PidStat {
  cpu: number;
  memory: number;
}
const pidusage = require('pidusage') as (pids: number[]) => Promise<Record<string, PidStat>>;

/** Processes in the sampled tree: a shell and its 19 children. */
const TREE_SIZE = 20;

const units = await readProcUnits();

/** CPU time of this process and its reaped children, in ms (children: cutime + cstime of /proc/self/stat). */
function cpuMs(): number {
  const own = process.cpuUsage();
  const stat = readFileSync('/proc/self/stat', 'latin1');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const childrenTicks = Number(fields[13]) + Number(fields[14]);
  return (own.user + own.system) / 1000 + (childrenTicks * 1000) / units.ticksPerSecond;
}

interface Measured {
  name: string;
  wall: number[];
  cpu: number;
  last: number;
}

/** One way to take a sample; `every`: only every n-th round; `gapMs`: at least this long after its previous sample (waited untimed). */
interface Approach {
  name: string;
  sample: () => Promise<unknown>;
  every?: number;
  gapMs?: number;
}

/**
 * Takes `count` rounds of samples, one of each approach in turn, so that the load of a shared
 * machine drifting over the run weighs on every approach alike.
 */
async function measure(count: number, approaches: readonly Approach[]): Promise<Measured[]> {
  for (const { sample } of approaches) for (let i = 0; i < 3; i++) await sample();
  const measured = approaches.map(({ name }) => ({ name, wall: [] as number[], cpu: 0, last: 0 }));
  for (let i = 0; i < count; i++) {
    for (const [j, { sample, every = 1, gapMs = 0 }] of approaches.entries()) {
      if (i % every !== 0) continue;
      const m = measured[j]!;
      const wait = m.last + gapMs - performance.now();
      if (wait > 0) await delay(wait);
      const cpuBefore = cpuMs();
      const start = performance.now();
      await sample();
      m.last = performance.now();
      m.wall.push(m.last - start);
      m.cpu += cpuMs() - cpuBefore;
    }
  }
  for (const m of measured) m.cpu /= m.wall.length;
  return measured;
}

function rows(measured: Measured[]): Array<Array<string | number>> {
  const base = measured[0]!;
  const mean = (m: Measured) => m.wall.reduce((a, b) => a + b, 0) / m.wall.length;
  return measured.map((m) => {
    const sorted = [...m.wall].sort((a, b) => a - b);
    return [m.name, String(m.wall.length), sorted[Math.floor(sorted.length / 2)]!, mean(m), m.cpu, `${(mean(m) / mean(base)).toFixed(1)}x`, `${(m.cpu / Math.max(0.001, base.cpu)).toFixed(1)}x`];
  });
}

const HEADER = ['approach', 'n', 'wall p50 ms', 'wall mean ms', 'CPU ms/sample', 'wall vs hand', 'CPU vs hand'];

/** Runs the bench and prints its tables. */
export async function run(): Promise<void> {
  const count = Number(process.env['BENCH_SAMPLES'] ?? 100);
  const processes = (await readProcessUsages()).length;

  let before = await readCpuTimes();
  const machine = await measure(count, [
    {
      name: 'hand-written /proc (readCpuTimes + readMemory)',
      sample: async () => {
        const [now, memory] = await Promise.all([readCpuTimes(), readMemory()]);
        const usage = usageBetween(before, now);
        before = now;
        return [usage, memory.used_bytes];
      },
    },
    { name: 'systeminformation (currentLoad + mem)', sample: async () => Promise.all([si.currentLoad(), si.mem()]) },
  ]);
  printTable(`Machine sample (CPU %, memory), ${count} samples each`, HEADER, rows(machine));

  // A tree of TREE_SIZE processes: a shell and its sleeping children.
  const root = spawn('/bin/sh', ['-c', `for i in $(seq ${TREE_SIZE - 1}); do sleep 600 & done; wait`], { stdio: 'ignore', detached: true });
  const pid = root.pid!;
  try {
    for (let tries = 0; treeOf(await readProcessUsages(), [pid]).length < TREE_SIZE; tries++) {
      if (tries === 200) throw new Error(`the tree of ${TREE_SIZE} processes did not start`);
      await delay(25);
    }
    const meter = new TreeUsageMeter(units);
    const scannedMeter = new TreeUsageMeter(units);
    const scanner = new ProcessScanner();
    const roots = new Map([['bench', pid]]);
    const tree = await measure(count, [
      { name: 'hand-written /proc, every process (TreeUsageMeter)', sample: async () => meter.measure(await readProcessUsages(), roots, Date.now()) },
      {
        name: 'hand-written /proc, ProcessScanner (as the service)',
        sample: async () => {
          const trees = scannedMeter.measure(await scanner.scan([pid]), roots, Date.now());
          scanner.keep([...trees.values()].flatMap((tree) => tree.pids));
          return trees;
        },
      },
      {
        name: 'pidusage (pids from a pass over every process)',
        sample: async () => {
          const pids = treeOf(await readProcessUsages(), [pid]).map((p) => p.pid);
          return Object.values(await pidusage(pids)).reduce((sum, s) => sum + s.cpu, 0);
        },
      },
      {
        name: 'systeminformation processes() (runs ps)',
        sample: async () => {
          const list = (await si.processes()).list.map((p) => ({ ...p, ppid: p.parentPid, pgid: -1, state: 'S', startTime: '0' }));
          return treeOf(list, [pid]).reduce((sum, p) => sum + p.cpu, 0);
        },
        // Seconds of ps per sample: one round in ten. It answers its previous result when asked
        // again within 500 ms, so each of its samples waits for that to pass.
        every: 10,
        gapMs: 600,
      },
    ]);
    printTable(`Per-Task sample: a tree of ${TREE_SIZE} processes among ${processes} on the machine`, HEADER, rows(tree));
  } finally {
    process.kill(-pid, 'SIGKILL');
  }
}

if (isMain(import.meta.url)) await run();
