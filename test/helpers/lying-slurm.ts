import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';

/** How a fake Slurm command answers instead of the real one. */
export type Lie =
  /** squeue: exits 0 and prints nothing, as a busy or restarting controller can. */
  | 'empty'
  /** squeue: exits 0 and prints lines that name no job. */
  | 'garbled'
  /** scontrol: the controller says it has no such job. */
  | 'unknown'
  /** sbatch: queues the job, then prints a site banner and `Submitted batch job N` only. */
  | 'banner'
  /** sbatch: queues the job, then prints a banner without its id. */
  | 'no-id'
  /** sbatch: queues the job, then never answers. */
  | 'hang'
  /** sbatch: queues the job, then puts a directory where its job file (slurm_job.json) goes. */
  | 'block-job-file'
  /** sbatch: queues the job, then kills its caller (the service) with SIGKILL. */
  | 'kill-service';

const COMMANDS = ['sbatch', 'squeue', 'scontrol', 'scancel'] as const;
type Command = (typeof COMMANDS)[number];

/**
 * Slurm client commands that run the real ones, except while the test tells one to lie: each is a
 * small shell script in `bin` (put first on the service's PATH) that reads its mode from a control
 * file and counts its lies, so a test knows the service has heard them. The real job keeps running.
 */
export interface LyingSlurm {
  /** A PATH with the fake commands first. */
  readonly path: string;
  lie(command: Command, how: Lie): Promise<void>;
  truth(command: Command): Promise<void>;
  /** How many times `command` lied so far. */
  lies(command: Command): Promise<number>;
}

function realPath(command: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim();
  if (!found) throw new Error(`${command} is not installed`);
  return found;
}

/** The script of one fake command: the lies it knows, else `exec` of the real one. */
function script(real: string, control: string): string {
  return `#!/bin/sh
mode=$(cat '${control}' 2>/dev/null)
[ -n "$mode" ] && echo >> '${control}.count'
case "$mode" in
  empty) exit 0 ;;
  garbled) printf 'JOBID|STATE|REASON\\nslurm_load_jobs: Socket timed out|\\n'; exit 0 ;;
  unknown) echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1 ;;
  banner) out=$('${real}' "$@") || exit $?; printf 'Welcome to the test cluster. Be kind to the scheduler.\\nSubmitted batch job %s\\n' "\${out%%;*}"; exit 0 ;;
  no-id) '${real}' "$@" > /dev/null || exit $?; echo 'Welcome to the test cluster. Your job is on its way.'; exit 0 ;;
  hang) '${real}' "$@" > /dev/null; exec sleep 600 ;;
  block-job-file)
    for arg; do case "$arg" in --chdir=*) dir="\${arg#--chdir=}" ;; esac; done
    out=$('${real}' "$@") || exit $?
    mkdir -p "$dir/slurm_job.json/in-the-way"
    echo "$out"; exit 0 ;;
  kill-service) out=$('${real}' "$@") || exit $?; kill -9 "$PPID"; echo "$out"; exit 0 ;;
esac
exec '${real}' "$@"
`;
}

/** Writes the fake commands into a temporary directory removed when the test ends. */
export async function lyingSlurm(t: Test): Promise<LyingSlurm> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-fake-slurm-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const bin = join(dir, 'bin');
  await mkdir(bin);
  const control = (command: Command) => join(dir, command);
  for (const command of COMMANDS) await writeFile(join(bin, command), script(realPath(command), control(command)), { mode: 0o755 });
  return {
    path: `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
    lie: (command, how) => writeFile(control(command), how),
    truth: (command) => rm(control(command), { force: true }),
    async lies(command) {
      const counted = await readFile(`${control(command)}.count`, 'utf8').catch(() => '');
      return counted.length;
    },
  };
}
