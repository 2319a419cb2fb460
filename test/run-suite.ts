/**
 * Runs the whole tap suite on the first HTTP front end (uWS), then again on each further one
 * (node:http) only the files whose behaviour depends on the front end: those carrying the marker
 * line `FRONT_END_MARKER`. Task, CLI and console tests reach the same Jobs whatever the sockets
 * are, so running them twice doubled the suite's time and proved nothing more. Prints one closing
 * line `N passed, N failed` counting top-level tests of every file and run; exits nonzero on any
 * failure, including a test file that crashed before reporting.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

const adapters = (process.env['TASKYARD_TEST_ADAPTERS'] ?? 'uws,node').split(',').filter(Boolean);
const extraArgs = process.argv.slice(2);
const resultsDir = '.tap/test-results';
/** Written by the leak check (test/helpers/leak-check.ts): one file per test process that leaked. */
const leaksDir = '.tap/leaks';
/** The line a test file carries when it must run on every front end (kept in the compiled JS). */
const FRONT_END_MARKER = '// Runs on every HTTP front end.';

function filesEndingWith(dir: string, suffix: string): string[] {
  let out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out = out.concat(filesEndingWith(full, suffix));
    else if (name.endsWith(suffix)) out.push(full);
  }
  return out;
}

const tapFiles = (dir: string) => filesEndingWith(dir, '.tap');

/** Test files for a later front end: the marked ones, unless files were named on the command line. */
function frontEndFiles(): string[] {
  if (extraArgs.some((a) => !a.startsWith('-'))) return [];
  return filesEndingWith(join('dist', 'test'), '.test.js')
    .filter((f) => readFileSync(f, 'utf8').includes(FRONT_END_MARKER))
    .sort();
}

/** Counts the top-level `ok` / `not ok` lines of each file's TAP (its tests, not assertions). */
function count(): { passed: number; failed: number; failures: string[] } {
  let passed = 0;
  let failed = 0;
  const failures: string[] = [];
  let files: string[] = [];
  try {
    files = tapFiles(resultsDir);
  } catch {
    return { passed, failed: 1, failures: ['no test results were written'] };
  }
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (/^ok \d+/.test(line)) passed++;
      else if (/^not ok \d+/.test(line)) {
        failed++;
        failures.push(`${file}: ${line}`);
      }
    }
  }
  // A leak fails its file after its tests passed: one failure per leaking file, named.
  let leaks: string[] = [];
  try {
    leaks = readdirSync(leaksDir).map((f) => readFileSync(join(leaksDir, f), 'utf8').trim());
  } catch {
    // no leak reports
  }
  failed += leaks.length;
  failures.push(...leaks.map((l) => `leak: ${l}`));
  return { passed, failed, failures };
}

let passed = 0;
let failed = 0;
let status = 0;
for (const [i, adapter] of adapters.entries()) {
  const files = i === 0 ? [] : frontEndFiles();
  if (i > 0 && files.length === 0 && !extraArgs.some((a) => !a.startsWith('-'))) continue;
  console.log(`\n=== ${i === 0 ? 'test suite' : `the ${files.length} front-end tests`} on the ${adapter} front end ===`);
  rmSync(resultsDir, { recursive: true, force: true });
  rmSync(leaksDir, { recursive: true, force: true });
  const started = performance.now();
  const run = spawnSync('npx', ['tap', ...extraArgs, ...files], { stdio: 'inherit', env: { ...process.env, TASKYARD_HTTP_ADAPTER: adapter } });
  console.log(`(${adapter}: ${((performance.now() - started) / 1000).toFixed(0)} s)`);
  const c = count();
  passed += c.passed;
  failed += c.failed;
  for (const f of c.failures) console.log(`FAILED [${adapter}] ${f}`);
  if (run.status !== 0) {
    status = 1;
    if (c.failed === 0) {
      failed++;
      console.log(`FAILED [${adapter}] tap exited with ${run.status ?? run.signal}`);
    }
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(status || (failed ? 1 : 0));
