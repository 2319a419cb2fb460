/**
 * Runs one compiled test file as its own Node process, the way tap's runner would, and settles with
 * its TAP output, exit and duration. The suite runner (`test/run-suite.ts`) calls this instead of
 * `tap`, so that it chooses the order of the files (longest first) and runs both front ends in one
 * pool; tap's runner sorts files by name and its process-info hook is loaded into every process a
 * test starts, which the suite does not use.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { takeFileCpu } from '../helpers/cpu-times.js';

/** One file on one front end. */
export interface FileRun {
  file: string;
  adapter: string;
}

/** A test or assertion the file skipped, and why. */
export interface Skip {
  /** The names from the top-level test down to the skipped one, joined by ' › '. */
  test: string;
  reason: string;
  /** A top-level test (counted as skipped), not a part of one. */
  topLevel: boolean;
}

export interface FileResult extends FileRun {
  /** Top-level tests that passed, failed and were skipped, from the file's own TAP. */
  passed: number;
  failed: number;
  skipped: number;
  /** Every skip in the file, at any depth. */
  skips: Skip[];
  /** Exit code, or the signal that ended it. */
  exit: number | string;
  seconds: number;
  /** CPU seconds of the test process, its reaped descendants and counted daemons (test/helpers/cpu-probe.ts); undefined if it wrote none. */
  cpu: number | undefined;
  /** stdout (TAP) then stderr, for the report of a failure. */
  output: string;
}

/** tap's own per-file limit, in seconds (the root test times out and reports what was running). */
const TAP_TIMEOUT_S = 300;
/** After tap's limit, how long the process gets to report before it is killed with its group. */
const KILL_AFTER_MS = (TAP_TIMEOUT_S + 30) * 1000;

/** Where the TAP of each run is kept (the layout tap's runner uses, per front end). */
export const resultPath = (run: FileRun) => join('.tap', 'test-results', run.adapter, `${run.file}.tap`);

/** Process groups of the files running now, ended all at once if the suite itself is stopped. */
const running = new Set<number>();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const pid of running) killGroup(pid);
    process.exit(130);
  });
}

/**
 * V8's optimizing compiler stays off in test processes: a test file runs for seconds, mostly code
 * that runs a few times (module start-up, one request of each kind), so compiling hot functions
 * again, on threads that compete with the other files for two cores, cost more CPU than it saved
 * (5-10% of a file's own CPU, measured on preview, mcp-tasks and a task-service file). Behaviour
 * is the same; the benches, not the tests, measure speed.
 *
 * Source maps are off too (Node would parse the map of each of the ~400 modules a test process
 * loads, ~0.15 s of CPU each time): the runner maps the positions in a failed file's output back
 * to the TypeScript instead (test/suite/source-positions.ts). `TASKYARD_TEST_SOURCE_MAPS=1` turns
 * them on, for a test that reads its own stack traces.
 */
export const SOURCE_MAPS = process.env['TASKYARD_TEST_SOURCE_MAPS'] === '1';
const NODE_FLAGS = [...(SOURCE_MAPS ? ['--enable-source-maps'] : []), '--no-opt'];

/** Where a test process's CPU probe writes (one file per run, read back and removed). */
const cpuPath = (run: FileRun) => join('.tap', 'cpu', run.adapter, `${run.file}.json`);

/** Runs one file with the preloads in `imports` (the leak check, the CPU probe). */
export function runFile(run: FileRun, imports: string[]): Promise<FileResult> {
  const started = performance.now();
  const cpuFile = cpuPath(run);
  mkdirSync(dirname(cpuFile), { recursive: true });
  // Its own process group, so a hung file is ended with everything it started.
  const child = spawn(process.execPath, [...NODE_FLAGS, ...imports.map((i) => `--import=${i}`), run.file], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TASKYARD_HTTP_ADAPTER: run.adapter, TAP_TIMEOUT: String(TAP_TIMEOUT_S), TASKYARD_CPU_FILE: cpuFile },
  });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => stdout.push(d));
  child.stderr.on('data', (d: Buffer) => stderr.push(d));
  if (child.pid !== undefined) running.add(child.pid);
  const killer = setTimeout(() => killGroup(child.pid), KILL_AFTER_MS);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      // Whatever the file left in its group (the leak check has named it) must not disturb the rest.
      killGroup(child.pid);
      if (child.pid !== undefined) running.delete(child.pid);
      const tap = Buffer.concat(stdout).toString();
      const path = resultPath(run);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, tap);
      const skips = skipsOf(tap);
      const skipped = skips.filter((k) => k.topLevel).length;
      // A skipped top-level test is reported `ok … # SKIP`: counted as skipped, not passed.
      const passed = (tap.match(/^ok \d+/gm) ?? []).length - skipped;
      const failed = (tap.match(/^not ok \d+/gm) ?? []).length;
      const cpu = takeFileCpu(cpuFile);
      const seconds = (performance.now() - started) / 1000;
      resolve({ ...run, passed, failed, skipped, skips, exit: code ?? signal ?? '?', seconds, cpu: cpu && cpu.own + cpu.children + cpu.daemons, output: `${tap}${Buffer.concat(stderr).toString()}` });
    });
  });
}

const SUBTEST = /^( *)# Subtest: (.*)$/;
/** A test point with the SKIP directive: indent, name, reason (tap escapes a `#` in a name as `\#`). */
const SKIPPED = /^( *)(?:not )?ok \d+(?: - (.*?))? # SKIP\b:?\s*(.*)$/i;

/**
 * The skips of a file's TAP, with the path of test names to each: a test skipped with a reason
 * (`{ skip: reason }`, `t.plan(0, reason)`) or a skipped assertion (`t.skip(message)`, whose
 * message is the reason). Subtests are indented by four spaces per level.
 */
export function skipsOf(tap: string): Skip[] {
  const path: string[] = [];
  const skips: Skip[] = [];
  for (const line of tap.split('\n')) {
    const sub = SUBTEST.exec(line);
    if (sub) {
      const depth = sub[1]!.length / 4;
      path.length = depth;
      path[depth] = sub[2]!;
      continue;
    }
    const skip = SKIPPED.exec(line);
    if (!skip) continue;
    const depth = skip[1]!.length / 4;
    const name = (skip[2] ?? '').replaceAll('\\#', '#');
    skips.push({ test: [...path.slice(0, depth), name].join(' › '), reason: skip[3] || name || 'no reason given', topLevel: depth === 0 });
  }
  return skips;
}

/** Ends a test process and whatever it left in its group (the group is gone if it cleaned up). */
export function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * Writes one measure of each run (`seconds` or `cpu`) keyed `<adapter> <file>`: the wall times are
 * read back by the next run to start the longest files first.
 */
export function saveTimes(path: string, results: FileResult[], measure: 'seconds' | 'cpu' = 'seconds'): void {
  const times: Record<string, number> = {};
  for (const r of results) {
    const value = r[measure];
    if (value !== undefined) times[`${r.adapter} ${r.file}`] = Math.round(value * 10) / 10;
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(times, Object.keys(times).sort(), 1)}\n`);
}
