import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ExecutorSection } from '../../schemas/config.js';
import type { TaskResources } from '../../schemas/tasks.js';
import type { RunnerEnd } from './executor.js';

/**
 * The Slurm commands the executor uses, as plain functions: `sbatch`, `squeue`, `scancel`. No
 * REST API and no `sacct` (without slurmdbd it knows nothing): `squeue -t all` shows finished jobs
 * until the cluster's MinJobAge, which is long enough for a watcher polling every half second.
 */

const exec = promisify(execFile);
/** A controller that does not answer must not hold a submit (sbatch retries for a long while). */
const COMMAND_TIMEOUT_MS = 20_000;

/** Runs a Slurm client command; rejects with its own first error line, which names the cause. */
export async function slurm(command: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<string> {
  try {
    const { stdout } = await exec(command, args, { timeout: COMMAND_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024, ...(env ? { env } : {}) });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; killed?: boolean; code?: string | number; message: string };
    if (e.code === 'ENOENT') throw new Error(`${command} is not installed (executor.kind is slurm)`);
    if (e.killed) throw new Error(`${command} did not answer within ${COMMAND_TIMEOUT_MS / 1000} s (is slurmctld up?)`);
    const said = e.stderr?.trim().split('\n').find((line) => line.trim() !== '');
    throw new Error(`${command} failed: ${said ?? e.message}`);
  }
}

/** `--time` takes minutes:seconds. */
function slurmTime(seconds: number): string {
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

/** Where a job's files are and how it is named. */
export interface BatchFiles {
  readonly jobName: string;
  readonly cwd: string;
  readonly logFile: string;
  readonly envFile: string;
  readonly script: string;
}

/** The sbatch arguments of one run: its files, its resources, then the configured extras. */
export function sbatchArgs(files: BatchFiles, resources: TaskResources, config: ExecutorSection): string[] {
  const args = ['--parsable', `--job-name=${files.jobName}`, `--chdir=${files.cwd}`, `--output=${files.logFile}`, `--error=${files.logFile}`, '--open-mode=append'];
  // The whole environment comes from the file (NUL-separated): --export would cut values at commas.
  args.push(`--export-file=${files.envFile}`);
  if (resources.cpus !== undefined) args.push(`--cpus-per-task=${resources.cpus}`);
  if (resources.gpus) args.push(`--gres=gpu:${resources.gpus}`);
  if (resources.memory_mb !== undefined) args.push(`--mem=${resources.memory_mb}M`);
  if (resources.time_limit_s !== undefined) args.push(`--time=${slurmTime(resources.time_limit_s)}`);
  if (config.partition) args.push(`--partition=${config.partition}`);
  if (config.account) args.push(`--account=${config.account}`);
  return [...args, ...config.sbatch_args, files.script];
}

/** The job id `sbatch --parsable` printed (`<id>` or `<id>;<cluster>`). */
export function parseJobId(stdout: string): string {
  const id = stdout.trim().split(';')[0] ?? '';
  if (!/^\d+$/.test(id)) throw new Error(`sbatch printed no job id: ${JSON.stringify(stdout.trim().slice(0, 200))}`);
  return id;
}

/** The squeue format `parseSqueue` reads: job id, state, reason. */
export const SQUEUE_FORMAT = '%i|%T|%r';

/** One job as squeue shows it. */
export interface JobState {
  readonly state: string;
  readonly reason: string;
}

export function parseSqueue(stdout: string): Map<string, JobState> {
  const jobs = new Map<string, JobState>();
  for (const line of stdout.split('\n')) {
    const [id, state, reason] = line.trim().split('|');
    if (id && state) jobs.set(id, { state, reason: reason ?? '' });
  }
  return jobs;
}

/** States in which a job may still run. */
const LIVE_STATES = new Set(['PENDING', 'RUNNING', 'CONFIGURING', 'COMPLETING', 'SUSPENDED', 'REQUEUED', 'REQUEUE_HOLD', 'REQUEUE_FED', 'RESIZING', 'SIGNALING', 'STAGE_OUT', 'STOPPED', 'RESV_DEL_HOLD']);

/** Whether a job has ended; its end as the service records it when the runner wrote no terminal status. */
export function endOfJob(jobId: string, job: JobState | undefined, cancelledHere: boolean): RunnerEnd | null {
  if (!job) return { kind: 'engine-ended', reason: `Slurm no longer knows job ${jobId}: it ended without a terminal status` };
  if (LIVE_STATES.has(job.state)) return null;
  if (job.state === 'COMPLETED') return { kind: 'exited', code: 0, signal: null };
  const by = job.state === 'CANCELLED' && !cancelledHere ? ' by someone other than this service (scancel)' : '';
  const reason = job.reason && job.reason !== 'None' ? ` (${job.reason})` : '';
  return { kind: 'engine-ended', reason: `Slurm job ${jobId} ended ${job.state}${by}${reason} without a terminal status (see its log)` };
}
