import { spawn } from 'node:child_process';
import t from 'tap';
import { historySeries, SampleRing, type MachineSample } from '../../supervisor/machine/history-ring.js';
import { parseStatUsage, ProcessScanner, readProcessUsages, TreeUsageMeter, type ProcessUsage } from '../../supervisor/machine/process-usage.js';
import { treeOf } from '../../workers/process-tree.js';
import { waitFor } from '../helpers/wait-for.js';
import type { GpuDevice } from '../../schemas/machine.js';

t.test('parseStatUsage reads CPU ticks and RSS after a command name with spaces and parentheses', async (t) => {
  // Fields after the comm: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime ... rss (24).
  const line = '4242 (a (b) c) R 1 4242 4242 0 -1 4194560 100 0 0 0 70 30 500 500 20 0 1 0 123456 1000000 321 18446744073709551615';
  t.same(parseStatUsage(line), { pid: 4242, state: 'R', ppid: 1, pgid: 4242, startTime: '123456', ticks: 100, rssPages: 321 }, "the children's times (cutime, cstime) are not counted");
  t.equal(parseStatUsage('garbage'), undefined);
});

const proc = (pid: number, ppid: number, ticks: number, startTime = '1', rssPages = 10): ProcessUsage => ({ pid, ppid, pgid: pid, state: 'S', startTime, ticks, rssPages });

t.test('TreeUsageMeter: CPU of a tree between samples, children found by parent, reused pids start afresh', async (t) => {
  const meter = new TreeUsageMeter({ ticksPerSecond: 100, pageBytes: 4096 });
  const roots = new Map([['run', 10]]);
  const first = meter.measure([proc(10, 1, 100), proc(11, 10, 50), proc(99, 1, 1_000)], roots, 0);
  t.same(first.get('run'), { cpuPercent: null, rssBytes: 2 * 10 * 4096, pids: [10, 11] }, 'no CPU figure at the first sample; an unrelated process is not counted');
  // One second later: the root used 0.5 s, the child 0.25 s, a new grandchild 0.1 s.
  const second = meter.measure([proc(10, 1, 150), proc(11, 10, 75), proc(12, 11, 10, '2')], roots, 1000);
  t.equal(second.get('run')?.cpuPercent, 85, '85 % of one core');
  // The child ended and its pid came back as another process with fewer ticks: counted from 0, never negative.
  const third = meter.measure([proc(10, 1, 150), proc(11, 10, 5, '3')], roots, 2000);
  t.equal(third.get('run')?.cpuPercent, 5);
  t.equal(meter.measure([proc(99, 1, 1_000)], roots, 3000).size, 0, 'a tree whose root is gone is not measured');
  t.equal(meter.measure([proc(10, 1, 200)], roots, 4000).get('run')?.cpuPercent, null, 'and is measured afresh when seen again');
});

const gpu = (index: number, utilization: number): GpuDevice => ({ vendor: 'nvidia', index, name: 'G', uuid: null, memory_total_bytes: 100, memory_used_bytes: utilization, utilization_percent: utilization, temperature_celsius: null });
const sample = (at: number, gpus: GpuDevice[], tasks: MachineSample['tasks'] = []): MachineSample => ({ at, cpuPercent: 1, memoryUsedBytes: 5, memoryTotalBytes: 10, gpus, tasks });

t.test('history series: GPUs aligned with the times (gaps where a sample missed one), Tasks with their own times', async (t) => {
  const task = { taskId: 'x#y#z', runId: 'r1', cpuPercent: 50, rssBytes: 7, gpuMemoryBytes: null, processes: 2 };
  const answer = historySeries([sample(1, [gpu(0, 10)]), sample(2, []), sample(3, [gpu(0, 30), gpu(1, 40)], [task])], 0, { interval_ms: 1, window_s: 1 });
  t.same(answer.times, [1, 2, 3]);
  t.same(answer.gpus.map((g) => [g.index, g.utilization_percent]), [[0, [10, null, 30]], [1, [null, null, 40]]]);
  t.same(answer.tasks, { 'x#y#z': { run_id: 'r1', times: [3], cpu_percent: [50], rss_bytes: [7], gpu_memory_bytes: [null], processes: [2] } });
  t.equal(answer.cursor, 3);
  t.equal(historySeries([], 7, { interval_ms: 1, window_s: 1 }).cursor, 7, 'no new sample: the cursor stays');
});

t.test('the ring overwrites its oldest sample and answers after a time', async (t) => {
  const ring = new SampleRing(3);
  t.equal(ring.latest, 0);
  for (let at = 1; at <= 5; at++) ring.push(sample(at, []));
  t.same(ring.after(0).map((s) => s.at), [3, 4, 5]);
  t.same(ring.after(4).map((s) => s.at), [5]);
  t.equal(ring.latest, 5);
});

t.test('ProcessScanner reads the trees and the new processes, every process only at a full scan or for a new root', async (t) => {
  // A shell with one sleeping child, which starts a second one when it reads a line.
  const shell = spawn('/bin/sh', ['-c', 'sleep 600 & read line; sleep 600 & wait'], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  const root = shell.pid!;
  t.teardown(() => process.kill(-root, 'SIGKILL'));
  await waitFor(async () => treeOf(await readProcessUsages(), [root]).length === 2, 10_000, 'the shell and its first child');
  const scanner = new ProcessScanner(1_000);
  const pidsOf = (entries: readonly ProcessUsage[]) => new Set(entries.map((e) => e.pid));

  const first = await scanner.scan([root]);
  t.ok(pidsOf(first).has(1), 'the first scan reads every process');
  const tree = treeOf(first, [root]);
  t.equal(tree.length, 2);
  scanner.keep(tree.map((p) => p.pid));

  const second = await scanner.scan([root]);
  t.notOk(pidsOf(second).has(1), 'then an old process in no tree is not read again');
  t.same(treeOf(second, [root]).map((p) => p.pid).sort(), tree.map((p) => p.pid).sort(), 'the tree is read whole');
  scanner.keep(treeOf(second, [root]).map((p) => p.pid));

  shell.stdin.end('go\n');
  const grown = await waitFor(async () => {
    const members = treeOf(await scanner.scan([root]), [root]);
    scanner.keep(members.map((p) => p.pid));
    return members.length === 3 ? members : undefined;
  }, 10_000, 'the new child to be found');
  t.equal(grown.length, 3, 'a process started since the last scan is read, and found in its tree');

  t.ok(pidsOf(await scanner.scan([root, process.pid])).has(1), 'a new root makes a full scan');
  scanner.forget();
  t.ok(pidsOf(await scanner.scan([root, process.pid])).has(1), 'and so does a scan after forget');
});
