/**
 * Command Tasks (issue 27): submit → running and Tasks/s of the built-in `command` Task running
 * `true` and `python3 -c pass`, beside the stepped TypeScript `demo` and the floor, a bare spawn
 * loop of the same commands (no service), all in one run. Targets: submit → running p50 <= 5 ms;
 * `command` running `true` at >= 4x the demo's Tasks/s, or the measured reason why not.
 * Also where one command-true Task's time and CPU go: a task runner's start (what a runner that
 * served more than one command run would save), the service and spawner, and the command.
 * `COMMAND_TASKS_N=100` (Tasks per batch), `COMMAND_TASKS_CLIENTS=8` (concurrent clients),
 * `COMMAND_TASKS_SEQ=50` (sequential submits timed); `COMMAND_TASKS_BASELINE=DIR` also measures
 * `command: true` and the demo on the service built in DIR (e.g. a scratch build of the commit
 * before runners served more than one command run), in the same run.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { openSync, closeSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { processCpu } from '../harness/process-cpu.js';
import { RUNNER } from '../runner/runner-file.js';
import { NO_RUN_YET, RUN_FLAG } from '../runner/spawner-messages.js';
import { deferExtraCaCerts } from '../runner/extra-ca-certs.js';
import { startServiceProcess } from './lib/service-process.js';
import { isMain, printTable } from './lib/table.js';
import { spawnLoop, stats, submitLatency, throughput, type SubmitArgs, type Throughput } from './lib/task-load.js';

const PYTHON = '/usr/bin/python3';

/** A Task compared, with the bare command that is its floor (none for the demo). */
interface Variant {
  label: string;
  args: SubmitArgs;
  bare?: readonly string[];
}

const VARIANTS: readonly Variant[] = [
  { label: 'command: true', args: () => ({ task: 'command', argv: ['true'] }), bare: ['true'] },
  { label: 'command: python3 -c pass', args: () => ({ task: 'command', argv: [PYTHON, '-c', 'pass'] }), bare: [PYTHON, '-c', 'pass'] },
  { label: 'stepped demo (TypeScript)', args: (i) => ({ task: 'demo', x: i, y: 2 }) },
];

/**
 * A task runner started as the spawner starts a pooled one, to the moment it says it is ready
 * (then its channel closes and it exits): the wall time and CPU of one Node start of the runner,
 * which a runner serving more than one command run would save per run.
 */
async function runnerStarts(count: number): Promise<{ ready: number[]; cpuMs: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-runner-start-'));
  const env = deferExtraCaCerts(process.env);
  const ready: number[] = [];
  const before = (await processCpu('self')).reaped;
  for (let i = 0; i < count; i++) {
    const slotLog = join(dir, `${i}.log`);
    const fd = openSync(slotLog, 'a');
    const t0 = performance.now();
    const child = spawn(process.execPath, [RUNNER, RUN_FLAG, NO_RUN_YET, '--slot-log', slotLog], { cwd: '/', detached: true, stdio: ['ignore', fd, fd, 'pipe'], env });
    closeSync(fd);
    const channel = child.stdio[3] as Readable & { destroy(): void };
    await new Promise<void>((resolve) => channel.once('data', () => resolve()));
    ready.push(performance.now() - t0);
    channel.destroy(); // its channel's end: the idle runner exits
    await new Promise((resolve) => child.once('exit', resolve));
  }
  const cpuMs = (1000 * ((await processCpu('self')).reaped - before)) / count;
  await rm(dir, { recursive: true, force: true });
  return { ready, cpuMs };
}

export async function run(): Promise<void> {
  const total = Number(process.env['COMMAND_TASKS_N'] ?? 100);
  const clients = Number(process.env['COMMAND_TASKS_CLIENTS'] ?? 8);
  const sequential = Number(process.env['COMMAND_TASKS_SEQ'] ?? 50);
  const cores = availableParallelism();

  const floors = new Map<string, Awaited<ReturnType<typeof spawnLoop>>>();
  for (const v of VARIANTS) if (v.bare) floors.set(v.label, await spawnLoop(v.bare, total, clients));
  const starts = await runnerStarts(20);

  const latency = new Map<string, Awaited<ReturnType<typeof submitLatency>>>();
  const rates = new Map<string, Throughput>();
  const measure = async (variants: readonly Variant[], root?: string) => {
    // A token is configured, so `command` is offered (and the bench's caller may call shell).
    const svc = await startServiceProcess(root ? { root } : {});
    try {
      for (const v of variants) latency.set(v.label, await submitLatency(svc, v.args, sequential));
      for (const v of variants) rates.set(v.label, await throughput(svc, v.args, total, clients));
    } finally {
      await svc.stop();
    }
  };
  await measure(VARIANTS);
  const baselineRoot = process.env['COMMAND_TASKS_BASELINE'];
  const baseline: Variant[] = baselineRoot ? VARIANTS.filter((v) => v.label !== 'command: python3 -c pass').map((v) => ({ label: `  ${v.label}, service in COMMAND_TASKS_BASELINE`, args: v.args })) : [];
  if (baselineRoot) await measure(baseline, baselineRoot);

  const latencyRows: Array<Array<string | number>> = [];
  for (const v of [...VARIANTS, ...baseline]) {
    const floor = floors.get(v.label);
    if (floor) {
      const s = stats(floor.times);
      latencyRows.push([`bare spawn of ${v.bare!.join(' ')}, to exit (floor)`, '', '', '', s.p50, s.p95]);
    }
    const l = latency.get(v.label)!;
    const running = stats(l.running);
    const runs = stats(l.run);
    const done = stats(l.succeeded);
    latencyRows.push([`${v.label}${l.failed ? ` (${l.failed} not succeeded)` : ''}`, running.p50, running.p95, runs.p50, done.p50, done.p95]);
  }
  const r = stats(starts.ready);
  latencyRows.push(['a task runner start, to ready (what reuse would save)', '', '', '', r.p50, r.p95]);
  printTable(`Start latency, ${sequential} sequential submits each waited, ms (target: submit → running p50 <= 5 ms)`, ['run', 'submit→running p50', 'p95', 'running→finished p50', 'submit→succeeded (or spawn→exit) p50', 'p95'], latencyRows);

  const demo = rates.get('stepped demo (TypeScript)')!;
  const rateRows: Array<Array<string | number>> = [];
  for (const v of [...VARIANTS, ...baseline]) {
    const floor = floors.get(v.label);
    if (floor) rateRows.push([`bare spawn loop of ${v.bare!.join(' ')} (floor)`, floor.perSecond, '', '', '', floor.cpuMs.toFixed(1), '']);
    const t = rates.get(v.label)!;
    const s = stats(t.running);
    const cpu = t.cpu.service + t.cpu.spawner + t.cpu.runners;
    rateRows.push([v.label, t.perSecond, (t.perSecond / demo.perSecond).toFixed(2), `${t.succeeded}/${total}`, s.p50, cpu.toFixed(1), `${t.cpu.service.toFixed(1)} / ${t.cpu.spawner.toFixed(1)} / ${t.cpu.runners.toFixed(1)}`]);
  }
  rateRows.push(['a task runner start, to ready', '', '', '', '', starts.cpuMs.toFixed(1), '']);
  printTable(`Tasks/s: ${total} submits from ${clients} clients, each submit + wait_task (${cores} cores; target: command true >= 4x demo)`, ['run', 'Tasks/s', 'x demo', 'succeeded', 'submit→running p50 ms', 'CPU ms/Task', 'service / spawner / runners+command'], rateRows);

  const commandTrue = rates.get('command: true')!;
  const trueLatency = stats(latency.get('command: true')!.running);
  const trueFloor = floors.get('command: true')!;
  const runnerCpu = commandTrue.cpu.runners - trueFloor.cpuMs;
  const allCpu = commandTrue.cpu.service + commandTrue.cpu.spawner + commandTrue.cpu.runners;
  printTable('Where one command-true Task goes (CPU ms per Task, from the batch above)', ['part', 'CPU ms', '% of the Task'], [
    ['service (HTTP, index, records, follow)', commandTrue.cpu.service.toFixed(1), `${((100 * commandTrue.cpu.service) / allCpu).toFixed(0)} %`],
    ['spawner (starting and reaping runners)', commandTrue.cpu.spawner.toFixed(1), `${((100 * commandTrue.cpu.spawner) / allCpu).toFixed(0)} %`],
    ['task runners (the run, its records, the command\'s start; their Node starts shared by the runs each served)', runnerCpu.toFixed(1), `${((100 * runnerCpu) / allCpu).toFixed(0)} %`],
    ['the command (bare spawn of true)', trueFloor.cpuMs.toFixed(1), `${((100 * trueFloor.cpuMs) / allCpu).toFixed(0)} %`],
    ['(one task runner start, to ready: what a run paid when each runner served one)', starts.cpuMs.toFixed(1), ''],
  ]);
  printTable('Targets', ['measure', 'value', 'target'], [
    ['command true Tasks/s over demo Tasks/s', `${(commandTrue.perSecond / demo.perSecond).toFixed(2)}x`, '>= 4x'],
    ['command true submit → running p50 (sequential)', `${trueLatency.p50} ms`, '<= 5 ms'],
    ['command true submit → running p50 (batch)', `${stats(commandTrue.running).p50} ms`, '<= 5 ms'],
  ]);
}

if (isMain(import.meta.url)) await run();
