import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { killProcessTree } from '../../workers/kill-tree.js';
import { waitFor } from '../helpers/wait-for.js';

/** Counts the SIGTERMs it gets; its clean-up (300 ms) is what a second SIGTERM would cut short. */
const COUNTING = `
import signal, subprocess, sys, time
count, ready = sys.argv[1], sys.argv[2]
def on_term(signum, frame):
    with open(count, "a") as f:
        f.write("TERM\\n")
    time.sleep(0.3)
    sys.exit(0)
signal.signal(signal.SIGTERM, on_term)
helper = subprocess.Popen(["sleep", "600"])
open(ready, "w").close()
while True:
    time.sleep(0.01)
`;

t.test('each process of a tree gets one SIGTERM, so a clean-up in progress is not cut short', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-kill-signals-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const count = join(dir, 'count');
  const ready = join(dir, 'ready');
  // Its own process group, as a runner has: the group is signalled, and its members by pid too.
  const child = spawn('/usr/bin/python3', ['-c', COUNTING, count, ready], { detached: true, stdio: 'ignore' });
  t.teardown(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  await waitFor(() => existsSync(ready), 20_000, 'the script to install its handler');
  await killProcessTree(child.pid!, 10_000);
  t.equal(await readFile(count, 'utf8'), 'TERM\n', 'one SIGTERM, and the clean-up ran to its end');
  t.equal(child.exitCode ?? (await new Promise((resolve) => child.once('exit', resolve))), 0, 'the script exited by its own hand');
});
