/**
 * What finding a run's processes by its environment marker costs (`collectTree` with a mark reads
 * every process's /proc/<pid>/environ; without, only /proc/<pid>/stat), against the same lookup
 * without the mark, with the machine's own processes plus OTHERS idle ones in the table (only the
 * processes younger than a live root are read; all of them when none lives); and one
 * whole `killProcessTree` of a command that detached a child with `(setsid sleep &)`.
 * The scan runs once per cancel, time limit or shell timeout, never while a run goes on.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { killProcessTree } from '../workers/kill-tree.js';
import { collectTree, listProcesses } from '../workers/process-tree.js';
import { isMain, printTable } from './lib/table.js';

const OTHERS = 200;
const ROUNDS = 20;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function timeOf(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

export async function run(): Promise<void> {
  const others: ChildProcess[] = Array.from({ length: OTHERS }, () => spawn('sleep', ['120'], { stdio: 'ignore' }));
  const markEntry = `TASKYARD_BENCH_MARK=${process.pid}`;
  const mark = { entry: markEntry };
  const tree = spawn('/bin/sh', ['-c', '(setsid sleep 120 &); sleep 120'], { detached: true, stdio: 'ignore', env: { ...process.env, TASKYARD_BENCH_MARK: String(process.pid) } });
  try {
    const processes = (await listProcesses()).length;
    const plain: number[] = [];
    const marked: number[] = [];
    const everyProcess: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      plain.push(await timeOf(() => collectTree([tree.pid!])));
      marked.push(await timeOf(() => collectTree([tree.pid!], mark)));
      everyProcess.push(await timeOf(() => collectTree([], mark)));
    }
    const found = String((await collectTree([tree.pid!], mark)).length);
    const foundPlain = String((await collectTree([tree.pid!])).length);
    const foundEvery = String((await collectTree([], mark)).length);
    const kill = await timeOf(() => killProcessTree(tree.pid!, 2_000, markEntry));
    const left = (await collectTree([], mark)).length;
    printTable(`kill-tree: ${processes} processes in /proc (${OTHERS} idle sleeps added), median of ${ROUNDS}`, ['lookup', 'ms', 'ratio', 'found'], [
      ['group + parent walk (no mark)', median(plain), 1, foundPlain],
      ['… + marker scan (processes younger than the root)', median(marked), median(marked) / median(plain), found],
      ['marker scan, no live root (every process)', median(everyProcess), median(everyProcess) / median(plain), foundEvery],
      ['killProcessTree with the mark (SIGTERM honoured)', kill, kill / median(plain), `${left} left`],
    ]);
  } finally {
    for (const child of others) child.kill('SIGKILL');
    await Promise.all(others.map((child) => (child.exitCode === null && child.signalCode === null ? once(child, 'exit') : undefined)));
    tree.kill('SIGKILL');
  }
}

if (isMain(import.meta.url)) await run();
