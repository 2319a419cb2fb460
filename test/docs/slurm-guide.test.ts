import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { PACKAGE_ROOT } from '../../core/build-info.js';
import { closedPort } from '../../harness/http-server.js';
import { guideScript, runGuide } from '../helpers/guide-script.js';
import { startTestService } from '../helpers/service.js';
import { slurmUnavailable } from '../helpers/slurm.js';

const exec = promisify(execFile);

/**
 * docs/tutorials/slurm.md promises that its `sh` blocks work as written: they run here, in order,
 * as root, from a clean directory: a one-node cluster from scripts/slurm-up.sh on free ports, a
 * service of the page's own with `executor.kind: slurm`, a Task run as a batch job, and the stop.
 */
const { blocks, script } = guideScript(await readFile(join(PACKAGE_ROOT, 'docs', 'tutorials', 'slurm.md'), 'utf8'));
const reason = slurmUnavailable();

/** What the page started, stopped by pid and path if the script broke off before its own stop. */
async function stopLeftovers(text: string, work: string): Promise<void> {
  const lock = await readFile(join(work, 'ws', '.taskyard', 'service.lock'), 'utf8').catch(() => null);
  const pid = lock === null ? null : (JSON.parse(lock) as { pid?: number }).pid;
  if (typeof pid === 'number') {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already stopped by the page.
    }
  }
  const dir = /^SLURM_CONF=(\/tmp\/taskyard-slurm\.\w+)\/slurm\.conf$/m.exec(text)?.[1];
  if (dir !== undefined) {
    await exec(join(PACKAGE_ROOT, 'scripts', 'slurm-down.sh'), [dir]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

t.test('every command of the Slurm tutorial works from a clean directory', { skip: reason ?? false }, async (t) => {
  t.ok(blocks >= 6, 'the tutorial has its blocks');
  // The page's commands talk to the service they start; this one only lends runGuide its CLI set-up.
  const svc = await startTestService(t);
  const env = { TASKYARD_HOME: PACKAGE_ROOT, SLURMCTLD_PORT: String(await closedPort()), SLURMD_PORT: String(await closedPort()) };
  const output = await runGuide(t, svc, script, env);
  await stopLeftovers(output.text, output.work);
  t.equal(output.code, 0, output.text.slice(-4000));
  const text = output.text;
  t.match(text, /main\*\s+up\s+infinite\s+1\s+idle\s+localhost/, 'step 1: sinfo shows the idle node');
  t.match(text, /^taskyard listening on http:\/\/127\.0\.0\.1:\d+/m, 'step 2: the Slurm service started');
  t.match(text, /INFO demo: result=5[\s\S]*base#demo#on-slurm {2}succeeded/, 'step 3: the Task ran as a batch job');
  t.match(text, /\{"job_id":"\d+","run_id":"\w+"\}/, 'step 3: slurm_job.json names the job');
  t.match(text, /^\d+ base#demo#on-slurm@\w+ \w+$/m, 'step 3: squeue lists it by its name');
  t.same((await svc.call('list_task_ids')).body.answer, [], "the test's own service ran nothing");
});
