import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { RUNNER } from '../../runner/runner-file.js';

/**
 * The runner's entry runs its bundle from V8's code cache. V8 checks a cache against the source's
 * length only: a rebuilt bundle of the same length must not run the old bundle's compiled code.
 */
t.test('a code cache older than the bundle is not used, even when the lengths match', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'taskyard-code-cache-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const entry = join(dir, 'runner.cjs');
  copyFileSync(RUNNER, entry);
  const bundle = join(dir, 'runner-main.cjs');
  const run = (...args: string[]) => execFileSync(process.execPath, [entry, ...args], { encoding: 'utf8' });

  writeFileSync(bundle, "process.stdout.write('old bundle')");
  t.equal(run('--write-code-cache'), 'old bundle');
  t.ok(statSync(`${bundle}.code-cache`).size > 0, 'the cache was written');
  writeFileSync(bundle, "process.stdout.write('new bundle')"); // the same length
  const later = new Date(statSync(`${bundle}.code-cache`).mtimeMs + 1000);
  utimesSync(bundle, later, later);
  t.equal(run(), 'new bundle', 'the new bundle runs, not the cached old one');
});
