import { rm, writeFile, mkdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { within } from '../../../workers/within.js';
import type { ExecutorSection } from '../../../schemas/config.js';
import { readJsonObject } from '../../common/json-file.js';
import { RUNNER } from '../../../runner/runner-file.js';
import { RUN_FLAG } from '../../../runner/spawner-messages.js';
import { writeJsonAtomic } from '../../../core/task-record/record-files.js';
import type { Executor, LeftRun, StartSpec, Runner } from './executor.js';
import { hasEnded, jobNameOf, parseJobId, parseSqueue, sbatchArgs, slurm, SlurmCommandError, SQUEUE_FORMAT, type BatchFiles } from './slurm-commands.js';
import { POLL_MS, SlurmJobPoller } from './slurm-job-poller.js';
import { WatchedJob } from './slurm-watched-job.js';

/** The file beside a run's record that names its Slurm job (TaskStatus keeps only the spec's fields). */
export const SLURM_JOB_FILE = 'slurm_job.json';
/** After scancel, how long to wait for the job to end (the cluster's KillWait is usually 30 s or less). */
const STOP_WITHIN_MS = 120_000;

/** How long an sbatch may take when `executor.sbatch_timeout_s` does not say (sbatch retries a silent controller for long). */
const SBATCH_TIMEOUT_S = 20;

/** Single-quotes a value for /bin/sh. */
const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/**
 * Runs each Task as one Slurm batch job whose script `exec`s the task runner, so `scancel`'s
 * SIGTERM (and SIGKILL after KillWait) reaches the runner itself. The job's environment comes from
 * a NUL-separated file, its output goes to `task.log`, its working directory is the Task directory;
 * the job id is kept in `slurm_job.json` beside the record. One poller reads every watched job's
 * state with squeue; a job Slurm ended without a terminal record ends its run with Slurm's reason.
 * A job is taken for gone only on evidence (see slurm-watched-job.ts), and one the service gives up
 * on is cancelled, so no run the service settled goes on writing into its Task directory.
 */
export class SlurmExecutor implements Executor {
  readonly kind = 'slurm';
  readonly queuesRuns = true;
  readonly #config: ExecutorSection;
  readonly #baseEnv: NodeJS.ProcessEnv;
  readonly #scratch: string;
  readonly #poller: SlurmJobPoller;

  /** `scratch` holds job scripts and environment files for the moment of a submit (private: they hold the environment). */
  constructor(opts: { config: ExecutorSection; env: NodeJS.ProcessEnv; scratch: string }) {
    this.#config = opts.config;
    this.#baseEnv = opts.env;
    this.#scratch = opts.scratch;
    this.#poller = new SlurmJobPoller(opts.env);
  }

  async start(spec: StartSpec): Promise<Runner> {
    await mkdir(this.#scratch, { recursive: true, mode: 0o700 });
    const script = join(this.#scratch, `${spec.runId}.sh`);
    const envFile = join(this.#scratch, `${spec.runId}.env`);
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries({ ...this.#baseEnv, ...spec.env, TASKYARD_TASK_DIR: spec.cwd })) if (value !== undefined) env[name] = value;
    try {
      await writeFile(envFile, Object.entries(env).map(([k, v]) => `${k}=${v}\0`).join(''), { mode: 0o600 });
      await writeFile(script, jobScript(spec.runId), { mode: 0o700 });
      const files = { jobName: jobNameOf(spec.taskId, spec.runId), cwd: spec.cwd, logFile: spec.logFile, envFile, script };
      // sbatch reads both files before it returns: they are not needed afterwards.
      const jobId = await this.#submit(files, spec);
      // Without its job file no service could follow the job (a full disk): it must not run unfollowed.
      await writeJsonAtomic(join(spec.cwd, SLURM_JOB_FILE), { job_id: jobId, run_id: spec.runId }).catch(async (err: unknown) => {
        throw new Error(`writing ${SLURM_JOB_FILE} failed (${(err as Error).message}); ${await this.#cancelNamed(files.jobName)}`);
      });
      return this.#watch(new WatchedJob(jobId, spec.cwd, spec.runId, null));
    } finally {
      await Promise.all([rm(script, { force: true }), rm(envFile, { force: true })]);
    }
  }

  /**
   * sbatch, answering the job id. Where sbatch may have queued a job without telling its id (killed
   * for not answering, or printing none), the job is cancelled by its unique name before the
   * submit fails, so nothing runs for a run that is settled as not started.
   */
  async #submit(files: BatchFiles, spec: StartSpec): Promise<string> {
    let stdout: string;
    try {
      stdout = await slurm('sbatch', sbatchArgs(files, spec.resources, this.#config), this.#baseEnv, (this.#config.sbatch_timeout_s ?? SBATCH_TIMEOUT_S) * 1000);
    } catch (err) {
      if (err instanceof SlurmCommandError && err.timedOut) throw new Error(`${err.message}; ${await this.#cancelNamed(files.jobName)}`);
      throw err;
    }
    const jobId = parseJobId(stdout);
    if (jobId) return jobId;
    throw new Error(`sbatch printed no job id: ${JSON.stringify(stdout.trim().slice(0, 200))}; ${await this.#cancelNamed(files.jobName)}`);
  }

  /**
   * Cancels any job of this (unique) name and waits until Slurm shows it ended: a runner the job
   * started meanwhile must be gone before the service writes the run's record. Says what came of it.
   */
  async #cancelNamed(jobName: string): Promise<string> {
    const named = async () => [...parseSqueue(await slurm('squeue', ['-h', '-t', 'all', '--me', `--name=${jobName}`, '-o', SQUEUE_FORMAT], this.#baseEnv)).values()];
    try {
      await slurm('scancel', [`--name=${jobName}`], this.#baseEnv);
      const deadline = Date.now() + STOP_WITHIN_MS;
      while (!(await named()).every(hasEnded)) {
        if (Date.now() > deadline) return `the job named ${jobName} was cancelled but had not ended ${STOP_WITHIN_MS / 1000} s later`;
        await delay(POLL_MS);
      }
      return `any job named ${jobName} was cancelled`;
    } catch (err) {
      return `cancelling the jobs named ${jobName} failed too (${(err as Error).message})`;
    }
  }

  /**
   * Every run whose job file names a job is followed again, whether or not the controller answers
   * now: the poller settles it on evidence (or after ADOPT_WAIT_MS without a controller). A run
   * without a job file may have been submitted by a service that died before writing the file:
   * its job is looked up by its unique name, and found, is adopted (and its job file written).
   * A run Slurm has no job of that name for never reached sbatch: it is settled as lost. A job
   * whose run had started is requeued if Slurm shows it pending (see WatchedJob.requeued).
   */
  async adopt(runs: readonly LeftRun[]): Promise<Map<string, Runner>> {
    const adopted = new Map<string, Runner>();
    for (const run of runs) {
      const jobId = (await readJobId(run)) ?? (await this.#jobNamed(run));
      if (!jobId || this.#poller.has(jobId)) continue;
      const job = new WatchedJob(jobId, run.dir, run.runId, Date.now());
      await job.noteStartedBefore();
      adopted.set(run.runId, this.#watch(job));
    }
    return adopted;
  }

  /**
   * The one job Slurm knows by the run's unique name, written into the run's job file; null when
   * there is none, or the controller does not answer (the run is then settled as lost, as one
   * that never reached sbatch; the reason is logged, naming the job to look for).
   */
  async #jobNamed(run: LeftRun): Promise<string | null> {
    // A run's directory is named by its Task ID (`<workspace>/<type>/<task_id>`).
    const jobName = jobNameOf(basename(run.dir), run.runId);
    try {
      const ids = [...parseSqueue(await slurm('squeue', ['-h', '-t', 'all', '--me', `--name=${jobName}`, '-o', SQUEUE_FORMAT], this.#baseEnv)).keys()];
      if (ids.length !== 1) return null;
      await writeJsonAtomic(join(run.dir, SLURM_JOB_FILE), { job_id: ids[0], run_id: run.runId });
      return ids[0]!;
    } catch (err) {
      console.error(`taskyard: looking for the Slurm job named ${jobName} of a run without ${SLURM_JOB_FILE} failed (${(err as Error).message}); the run is settled as lost`);
      return null;
    }
  }

  async stop(runner: Runner): Promise<void> {
    if (!(runner instanceof WatchedJob)) return;
    runner.cancelled = true;
    await slurm('scancel', [runner.jobId], this.#baseEnv);
    await within(runner.ended, STOP_WITHIN_MS);
  }

  /** Stops watching: the jobs run on, their runs end here as "lost" (the service is stopping, so their records stay as they are). */
  close(): void {
    this.#poller.close();
  }

  #watch(job: WatchedJob): Runner {
    this.#poller.watch(job);
    return job;
  }
}

/**
 * The batch script of one run: a first log line says which job and node ran it (each run's log
 * is kept with its record, so the run history shows where every attempt ran), then `exec`: the
 * runner is the job's process, so scancel signals it (not a shell that would die first).
 */
function jobScript(runId: string): string {
  const where = 'echo "taskyard: Slurm job $SLURM_JOB_ID on node $SLURMD_NODENAME"';
  return `#!/bin/sh\n${where}\nexec ${quote(process.execPath)} ${quote(RUNNER)} ${RUN_FLAG} ${runId}\n`;
}

/** The job id a run's `slurm_job.json` names, when it names this run (read without following links). */
async function readJobId(run: LeftRun): Promise<string | null> {
  const job = await readJsonObject(join(run.dir, SLURM_JOB_FILE));
  return job?.['run_id'] === run.runId && typeof job['job_id'] === 'string' ? job['job_id'] : null;
}
