import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ExecutorSection } from '../../../schemas/config.js';
import type { RetryCause, TaskResources } from '../../../schemas/tasks.js';
import type { RunnerEnd } from './executor.js';

/**
 * The Slurm commands the executor uses, as plain functions: `sbatch`, `squeue`, `scontrol`,
 * `scancel`, and the readers of what they print. No REST API and no `sacct` (without slurmdbd it
 * knows nothing): `squeue -t all` shows finished jobs until the cluster's MinJobAge, which is long
 * enough for a watcher polling every half second.
 */

const exec = promisify(execFile);
/** A controller that does not answer must not hold a poll or a cancel (the client commands retry for a long while). */
const COMMAND_TIMEOUT_MS = 20_000;

/** A Slurm client command that failed, with its own first error line. */
export class SlurmCommandError extends Error {
  /** Killed for not answering: it may have acted all the same (an sbatch may have queued its job). */
  readonly timedOut: boolean;

  constructor(message: string, timedOut = false) {
    super(message);
    this.timedOut = timedOut;
  }
}

/** Runs a Slurm client command, killed after `timeoutMs`; rejects with its own first error line, which names the cause. */
export async function slurm(command: string, args: readonly string[], env?: NodeJS.ProcessEnv, timeoutMs = COMMAND_TIMEOUT_MS): Promise<string> {
  try {
    const { stdout } = await exec(command, args, { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024, ...(env ? { env } : {}) });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; killed?: boolean; code?: string | number; message: string };
    if (e.code === 'ENOENT') throw new SlurmCommandError(`${command} is not installed (executor.kind is slurm)`);
    if (e.killed) throw new SlurmCommandError(`${command} did not answer within ${timeoutMs / 1000} s (is slurmctld up?)`, true);
    const said = e.stderr?.trim().split('\n').find((line) => line.trim() !== '');
    throw new SlurmCommandError(`${command} failed: ${said ?? e.message}`);
  }
}

/** What `scontrol show job` says of one job; 'unknown' when the controller has no such job, null when it did not answer. */
export async function showJob(jobId: string, env: NodeJS.ProcessEnv): Promise<JobState | 'unknown' | null> {
  try {
    return parseScontrolJob(await slurm('scontrol', ['show', 'job', '-o', jobId], env));
  } catch (err) {
    return /Invalid job id/i.test((err as Error).message) ? 'unknown' : null;
  }
}

/**
 * The job name of one run: unique (the run id), so a job whose id sbatch did not tell can still be
 * cancelled by name, and a person reading squeue sees which Task it is.
 */
export function jobNameOf(taskId: string, runId: string): string {
  return `${taskId}@${runId}`;
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

/**
 * The job id sbatch printed: a `Submitted batch job <id>` line (a site wrapper, or sbatch without
 * --parsable) anywhere among banner lines, else a line that is only `<id>` or `<id>;<cluster>`
 * (--parsable). Null when there is none, or when the lines name different ids: the caller must
 * then make sure nothing runs.
 */
export function parseJobId(stdout: string): string | null {
  const lines = stdout.split('\n');
  const idsOf = (pattern: RegExp) => new Set(lines.map((line) => pattern.exec(line)?.[1]).filter((id) => id !== undefined));
  const submitted = idsOf(/\bSubmitted batch job (\d+)\b/);
  const ids = submitted.size > 0 ? submitted : idsOf(/^\s*(\d+)(?:;\S+)?\s*$/);
  return ids.size === 1 ? [...ids][0]! : null;
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

/** The state of the one job `scontrol show job -o` printed; null when the answer names none. */
export function parseScontrolJob(stdout: string): JobState | null {
  const state = /(?:^|\s)JobState=(\S+)/.exec(stdout)?.[1];
  return state ? { state, reason: /(?:^|\s)Reason=(\S+)/.exec(stdout)?.[1] ?? '' } : null;
}

/**
 * States in which a job has ended (Slurm 22.05's list). Any other state, a live one or a word a
 * garbled answer made up, leaves the run as it is.
 */
const ENDED_STATES = new Set(['COMPLETED', 'CANCELLED', 'FAILED', 'TIMEOUT', 'NODE_FAIL', 'OUT_OF_MEMORY', 'BOOT_FAIL', 'DEADLINE', 'PREEMPTED', 'REVOKED', 'SPECIAL_EXIT']);

/** Whether Slurm shows a job as ended (a live state, or one it made up, is not). */
export function hasEnded(job: JobState): boolean {
  return ENDED_STATES.has(job.state);
}

/**
 * Whether a job has ended; its end as the service records it when the runner wrote no terminal
 * status. `job` undefined: Slurm no longer knows it (the caller has the evidence).
 */
export function endOfJob(jobId: string, job: JobState | undefined, cancelledHere: boolean): RunnerEnd | null {
  if (!job) return { kind: 'engine-ended', reason: `Slurm no longer knows job ${jobId}: it ended without a terminal status`, cause: 'lost' };
  if (!hasEnded(job)) return null;
  if (job.state === 'COMPLETED') return { kind: 'exited', code: 0, signal: null };
  const by = job.state === 'CANCELLED' && !cancelledHere ? ' by someone other than this service (scancel)' : '';
  const reason = job.reason && job.reason !== 'None' ? ` (${job.reason})` : '';
  const cause = SLURM_CAUSES[job.state];
  return { kind: 'engine-ended', reason: `Slurm job ${jobId} ended ${job.state}${by}${reason} without a terminal status (see its log)`, ...(cause && { cause }) };
}

/**
 * States of a job Slurm put back in its queue after it ran (its node failed or it was preempted,
 * with `--requeue` or `JobRequeue=1`): the batch script would start again, with the same run.
 */
const REQUEUED_STATES = new Set(['PENDING', 'REQUEUED', 'REQUEUE_HOLD', 'REQUEUE_FED', 'CONFIGURING']);

/** Whether a job shown in `state` after it was seen running was requeued. */
export function isRequeued(job: JobState): boolean {
  return REQUEUED_STATES.has(job.state);
}

/**
 * The end of a run whose job Slurm requeued: the machine's failure (node_fail), so a retry policy
 * that names it gives the Task a new run (a new job) with this one recorded under runs/. The
 * requeued job itself is cancelled by the caller: it would start the same run again in a directory
 * the service has settled.
 */
export function requeuedEnd(jobId: string): RunnerEnd {
  return { kind: 'engine-ended', reason: `Slurm requeued job ${jobId} after it ran (NODE_FAIL: its node failed; or it was preempted, or requeued by hand); the requeued job was cancelled`, cause: 'node_fail' };
}

/** Slurm's end states that are the machine's failure, as a retry policy names them (others: the code's, or a person's). */
const SLURM_CAUSES: Readonly<Record<string, RetryCause>> = { NODE_FAIL: 'node_fail', BOOT_FAIL: 'node_fail', PREEMPTED: 'node_fail', TIMEOUT: 'timeout', DEADLINE: 'timeout' };
