import { spawn } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const DIST = fileURLToPath(new URL('../../', import.meta.url));
const RUNNER = join(DIST, 'test', 'run-suite.js');

/**
 * Runs the suite runner on the skipping fixture, in a scratch directory (its own `.tap/`, with
 * `dist` linked), so the results of a suite run around this one are left alone.
 */
async function runSuite(): Promise<{ code: number | null; stdout: string }> {
  const cwd = await mkdtemp(join(tmpdir(), 'taskyard-skips-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  await symlink(DIST, join(cwd, 'dist'), 'dir');
  const child = spawn(process.execPath, [RUNNER, 'dist/test/suite/fixtures/skips.js'], { cwd, env: { ...process.env, TASKYARD_TEST_ADAPTERS: 'uws', TASKYARD_TEST_JOBS: '1' }, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (c) => (clearTimeout(timer), resolve(c)));
  });
  return { code, stdout };
}

t.test('the suite runner lists every skip with its file, test and reason, and counts skipped tests apart from passes', async (t) => {
  const { code, stdout } = await runSuite();
  t.equal(code, 0, stdout);
  const lines = stdout.trim().split('\n');
  t.equal(lines.at(-1), '2 passed, 0 failed, 2 skipped', 'the closing line: skipped tests are not passes');
  t.match(stdout, /suite\/fixtures\/skips\.js \[uws\]\s+\(2 passed, 2 skipped\)/, 'the file line counts them');
  const at = lines.findIndex((l) => l.startsWith('skipped ('));
  t.ok(at > 0, 'a visible skipped section');
  t.same(lines.slice(at, -1), [
    'skipped (4):',
    '  suite/fixtures/skips.js [uws] › has a skipped part › an assertion: its check needs a GPU',
    '  suite/fixtures/skips.js [uws] › has a skipped part › inner #1: mounting a tmpfs needs root',
    '  suite/fixtures/skips.js [uws] › needs slurm: slurmctld is not installed',
    '  suite/fixtures/skips.js [uws] › nothing planned: no Python client installed',
  ]);
});
