/**
 * Runs the whole tap suite once per HTTP front end (uWS and node:http), then prints one closing
 * line `N passed, N failed` counting top-level tests of every file and run. Exits nonzero on any
 * failure, including a test file that crashed before reporting.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

const adapters = (process.env['TASKYARD_TEST_ADAPTERS'] ?? 'uws,node').split(',').filter(Boolean);
const extraArgs = process.argv.slice(2);
const resultsDir = '.tap/test-results';

function tapFiles(dir: string): string[] {
  let out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out = out.concat(tapFiles(full));
    else if (name.endsWith('.tap')) out.push(full);
  }
  return out;
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
  return { passed, failed, failures };
}

let passed = 0;
let failed = 0;
let status = 0;
for (const adapter of adapters) {
  console.log(`\n=== test suite on the ${adapter} front end ===`);
  rmSync(resultsDir, { recursive: true, force: true });
  const run = spawnSync('npx', ['tap', ...extraArgs], { stdio: 'inherit', env: { ...process.env, TASKYARD_HTTP_ADAPTER: adapter } });
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
