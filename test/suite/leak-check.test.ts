import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { waitFor } from '../helpers/wait-for.js';
import { isAlive } from '../../workers/process-tree.js';

const CHECK = fileURLToPath(new URL('../helpers/leak-check.js', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/leaky.js', import.meta.url));

/** Runs the fixture file under the leak check in a scratch directory; the process is bounded. */
async function runLeaky(t: Test, leak: string): Promise<{ code: number | null; stderr: string; reports: string[] }> {
  const cwd = await mkdtemp(join(tmpdir(), 'taskyard-leak-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  const child = spawn(process.execPath, [`--import=${CHECK}`, FIXTURE], { cwd, env: { ...process.env, LEAK: leak }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  // A leaked ref'd handle keeps the file's process alive after its report (written before the
  // stderr line): end it as soon as the line shows. The bound only guards a hung fixture.
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (c) => (clearTimeout(timer), resolve(c)));
    child.stderr.on('data', () => {
      if (stderr.includes('left behind')) child.kill('SIGKILL');
    });
  });
  const dir = join(cwd, '.tap', 'leaks');
  const reports = await Promise.all((await readdir(dir).catch(() => [] as string[])).map((f) => readFile(join(dir, f), 'utf8')));
  return { code, stderr, reports };
}

t.test('a file that cleans up passes the leak check', async (t) => {
  for (const leak of ['none', 'closed']) {
    const run = await runLeaky(t, leak);
    t.equal(run.code, 0, `${leak}: exits 0`);
    t.same(run.reports, [], `${leak}: no leak report`);
  }
});

t.test('each kind of leftover fails the file, named', async (t) => {
  const expected: Record<string, RegExp> = { timer: /1 × Timeout/, server: /1 × TCPServerWrap/, child: /process \d+: sleep 60/ };
  for (const [leak, pattern] of Object.entries(expected)) {
    const run = await runLeaky(t, leak);
    t.not(run.code, 0, `${leak}: the file fails`);
    t.equal(run.reports.length, 1, `${leak}: one report`);
    t.match(run.reports[0], pattern, `${leak}: the leftover is named`);
    t.match(run.reports[0], /leaky\.js left behind/, `${leak}: the file is named`);
    const pid = /process (\d+)/.exec(run.reports[0] ?? '')?.[1];
    if (pid) {
      process.kill(Number(pid), 'SIGKILL');
      await waitFor(async () => !(await isAlive(Number(pid))), 10_000, 'the leaked child to end');
    }
  }
});
