/**
 * Runs the whole suite: every test file on the first HTTP front end (uWS), and the files whose
 * behaviour depends on the front end (those carrying `FRONT_END_MARKER`, test/helpers/front-end.ts) on each
 * further one (node:http) as well. Task, CLI and console tests reach the same Jobs whatever the
 * sockets are, so running them twice would double the time and prove nothing more.
 *
 * All runs share one pool of `TASKYARD_TEST_JOBS` processes (default 2 per core), the longest files
 * first, by the times the previous run measured (`.tap/suite-times.json`, else the checked-in
 * `test/suite/times.json`): most files wait on processes, sockets and browsers rather than the CPU,
 * and a long file started last would decide the wall time alone. 3 per core was tried: a whole run
 * took longer (640 s against 624) and more CPU (997 s against 932, tests waiting longer on each
 * other). Each file runs under the leak check (`test/helpers/leak-check.ts`).
 *
 * Each test process also reports the CPU it used with its reaped descendants (test/helpers/cpu-probe.ts):
 * on a shared machine that, not the wall time, says what a file costs.
 *
 * Prints a line per file, the output of each failure, where the time and the CPU went, every skip
 * (file, test, reason), and last the line `N passed, N failed, N skipped` counting top-level tests
 * of every file and run (a skipped one is not a pass); exits nonzero on any failure, including a
 * file that crashed or leaked after its tests passed.
 *
 * `node dist/test/run-suite.js [file…]` runs only the named files (on every front end unless
 * `TASKYARD_TEST_ADAPTERS` says otherwise).
 */
import { availableParallelism } from 'node:os';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { testsFrontEnd } from './helpers/front-end.js';
import { statCpu } from './helpers/cpu-times.js';
import { runFile, saveTimes, SOURCE_MAPS, type FileResult, type FileRun } from './suite/run-file.js';
import { sourcePositions } from './suite/source-positions.js';

const adapters = (process.env['TASKYARD_TEST_ADAPTERS'] ?? 'uws,node').split(',').filter(Boolean);
const named = process.argv.slice(2).map((f) => relative('.', f));
const jobs = Number(process.env['TASKYARD_TEST_JOBS']) || availableParallelism() * 2;
const LEAK_CHECK = './dist/test/helpers/leak-check.js';
/** Writes the CPU each test process used (test/helpers/cpu-probe.ts). */
const CPU_PROBE = './dist/test/helpers/cpu-probe.js';
/** Written by the leak check: one file per test process that leaked. */
const LEAKS_DIR = '.tap/leaks';
const LAST_TIMES = '.tap/suite-times.json';
/** CPU seconds per file of the last whole run, for comparing runs (wall times of a shared machine say little). */
const LAST_CPU = '.tap/suite-cpu.json';
const KNOWN_TIMES = 'test/suite/times.json';

function testFiles(dir: string): string[] {
  let out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out = out.concat(testFiles(full));
    else if (name.endsWith('.test.js')) out.push(full);
  }
  return out;
}

function plannedRuns(): FileRun[] {
  const files = named.length > 0 ? named : testFiles(join('dist', 'test'));
  return adapters.flatMap((adapter, i) =>
    files.filter((file) => i === 0 || named.length > 0 || testsFrontEnd(file)).map((file) => ({ file, adapter })),
  );
}

function readTimes(): Record<string, number> {
  for (const path of [LAST_TIMES, KNOWN_TIMES]) {
    try {
      return JSON.parse(readFileSync(path, 'utf8')) as Record<string, number>;
    } catch {
      // not there yet, or damaged: try the next, else no order beyond the name
    }
  }
  return {};
}

/** Runs the files, at most `jobs` at once, taking them in the given order. */
async function runAll(runs: FileRun[], onDone: (r: FileResult) => void): Promise<FileResult[]> {
  const queue = [...runs];
  const results: FileResult[] = [];
  const lane = async () => {
    for (let run = queue.shift(); run; run = queue.shift()) {
      const result = await runFile(run, [LEAK_CHECK, CPU_PROBE]);
      results.push(result);
      onDone(result);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, runs.length) }, lane));
  return results;
}

const cpuText = (r: FileResult) => (r.cpu === undefined ? '     ?' : r.cpu.toFixed(1).padStart(6));
const label = (r: FileRun) => `${r.file.replace(/^dist\/test\//, '')} [${r.adapter}]`;
const failedRun = (r: FileResult) => r.failed > 0 || r.exit !== 0;

const times = readTimes();
const runs = plannedRuns().sort((a, b) => (times[`${b.adapter} ${b.file}`] ?? 0) - (times[`${a.adapter} ${a.file}`] ?? 0));
rmSync('.tap/test-results', { recursive: true, force: true });
rmSync(LEAKS_DIR, { recursive: true, force: true });
console.log(`${runs.length} test files (${adapters.join(', ')}), ${jobs} at a time`);
const started = performance.now();
const results = await runAll(runs, (r) => {
  const mark = failedRun(r) ? 'FAIL' : 'ok  ';
  console.log(`${mark} ${r.seconds.toFixed(1).padStart(6)} s ${cpuText(r)} cpu  ${label(r)}  (${r.passed} passed${r.failed ? `, ${r.failed} failed` : ''}${r.skipped ? `, ${r.skipped} skipped` : ''})`);
  if (failedRun(r)) console.log((SOURCE_MAPS ? r.output : sourcePositions(r.output)).replace(/^/gm, '    | '));
});
const wall = (performance.now() - started) / 1000;
if (named.length === 0) {
  saveTimes(LAST_TIMES, results);
  saveTimes(LAST_CPU, results, 'cpu');
}

let leaks: string[] = [];
try {
  leaks = readdirSync(LEAKS_DIR).map((f) => readFileSync(join(LEAKS_DIR, f), 'utf8').trim());
} catch {
  // no leak reports
}
const passed = results.reduce((n, r) => n + r.passed, 0);
const skipped = results.reduce((n, r) => n + r.skipped, 0);
// A file that exited nonzero without a failing test (a crash, a timeout, a leak) counts once.
const failed = results.reduce((n, r) => n + (r.failed > 0 ? r.failed : r.exit !== 0 ? 1 : 0), 0);

const fileCpu = results.reduce((n, r) => n + (r.cpu ?? 0), 0);
const unmeasured = results.filter((r) => r.cpu === undefined).length;
const own = process.cpuUsage();
console.log(`\nslowest files (wall ${wall.toFixed(0)} s, ${jobs} at a time):`);
for (const r of [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 12)) console.log(`  ${r.seconds.toFixed(1).padStart(6)} s  ${label(r)}`);
console.log(`most CPU (files ${fileCpu.toFixed(0)} s${unmeasured ? `, ${unmeasured} unmeasured` : ''}; every reaped test process ${statCpu('self').reaped.toFixed(0)} s; this runner ${((own.user + own.system) / 1e6).toFixed(1)} s):`);
for (const r of [...results].sort((a, b) => (b.cpu ?? 0) - (a.cpu ?? 0)).slice(0, 12)) console.log(`  ${cpuText(r)} s  ${label(r)}`);
for (const r of results.filter(failedRun)) console.log(`FAILED ${label(r)}: ${r.failed} failed, exit ${r.exit}`);
for (const l of leaks) console.log(`FAILED leak: ${l}`);
// What did not run is said where it is seen, not only in a tap comment of a passing file.
const skips = results.flatMap((r) => r.skips.map((k) => `  ${label(r)} › ${k.test}: ${k.reason}`)).sort();
if (skips.length) console.log(`skipped (${skips.length}):\n${skips.join('\n')}`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 ? 1 : 0);
