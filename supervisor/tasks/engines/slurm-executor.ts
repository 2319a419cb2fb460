import { basename, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { within } from '../../../workers/within.js';
import type { ExecutorSection } from '../../../schemas/config.js';
import { readJsonObject } from '../../common/json-file.js';
import { RUNNER } from '../../../runner/runner-file.js';
import { RUN_FLAG } from '../../../runner/spawner-messages.js';
import { writeJsonAtomic } from '../../../core/task-record/record-files.js';
import type { Executor, LeftRun, StartSpec, Runner } from './executor.js';
import { hasEnded, jobNameOf } from './slurm-commands.js';
import { SlurmCliTransport } from './slurm-cli-transport.js';
import { SlurmRestTransport } from './slurm-rest-transport.js';
import { SubmitUncertain, type SlurmTransport } from './slurm-transport.js';
import { POLL_MS, SlurmJobPoller } from './slurm-job-poller.js';
import { WatchedJob } from './slurm-watched-job.js';

/** The file beside a run's record that names its Slurm job (TaskStatus keeps only the spec's fields). */
export const SLURM_JOB_FILE = 'slurm_job.json';
/** After scancel, how long to wait for the job to end (the cluster's KillWait is usually 30 s or less). */
const STOP_WITHIN_MS = 120_000;

/** Variables of the service's environment a job never gets: a Slurm token acts as its user on the whole cluster. */
const NOT_FOR_JOBS = new Set(['SLURM_JWT']);

/** Single-quotes a value for /bin/sh. */
const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/**
 * Runs each Task as one Slurm batch job whose script `exec`s the task runner, so `scancel`'s
 * SIGTERM (and SIGKILL after KillWait) reaches the runner itself. It talks to the cluster through
 * one transport (slurm-transport.ts): slurmrestd where `executor.rest` says, else the commands.
 * Its output goes to `task.log`, its working directory is the Task directory;
 * the job id is kept in `slurm_job.json` beside the record. One poller reads every watched job's
 * state through the transport; a job Slurm ended without a terminal record ends its run with Slurm's reason.
 * A job is taken for gone only on evidence (see slurm-watched-job.ts), and one the service gives up
 * on is cancelled, so no run the service settled goes on writing into its Task directory.
 */
export class SlurmExecutor implements Executor {
  readonly kind = 'slurm';
  readonly queuesRuns = true;
  readonly #baseEnv: NodeJS.ProcessEnv;
  readonly #slurm: SlurmTransport;
  readonly #poller: SlurmJobPoller;

  /** `scratch` holds job scripts and environment files for the moment of a submit (private: they hold the environment). */
  constructor(opts: { config: ExecutorSection; env: NodeJS.ProcessEnv; scratch: string }) {
    this.#baseEnv = opts.env;
    const rest = opts.config.rest;
    this.#slurm = rest ? new SlurmRestTransport(rest, opts.config) : new SlurmCliTransport(opts);
    this.#poller = new SlurmJobPoller(this.#slurm);
    // An unsupported slurmrestd is said at start, not only at the first submit.
    if (this.#slurm instanceof SlurmRestTransport) this.#slurm.api().catch((err: unknown) => console.error(`taskyard: executor.rest: ${(err as Error).message}`));
  }

  async start(spec: StartSpec): Promise<Runner> {
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries({ ...this.#baseEnv, ...spec.env, TASKYARD_TASK_DIR: spec.cwd })) if (value !== undefined && !NOT_FOR_JOBS.has(name)) env[name] = value;
    const jobName = jobNameOf(spec.taskId, spec.runId);
    const script = jobScript(spec.runId);
    const jobId = await this.#slurm.submit({ jobName, cwd: spec.cwd, logFile: spec.logFile, script, env, resources: spec.resources, runId: spec.runId }).catch(async (err: unknown) => {
      // The job may be queued all the same: nothing may run for a run settled as not started.
      if (err instanceof SubmitUncertain) throw new Error(`${err.message}; ${await this.#cancelNamed(jobName)}`);
      throw err;
    });
    // Without its job file no service could follow the job (a full disk): it must not run unfollowed.
    await writeJsonAtomic(join(spec.cwd, SLURM_JOB_FILE), { job_id: jobId, run_id: spec.runId }).catch(async (err: unknown) => {
      throw new Error(`writing ${SLURM_JOB_FILE} failed (${(err as Error).message}); ${await this.#cancelNamed(jobName)}`);
    });
    return this.#watch(new WatchedJob(jobId, spec.cwd, spec.runId, null));
  }

  /**
   * Cancels any job of this (unique) name and waits until Slurm shows it ended: a runner the job
   * started meanwhile must be gone before the service writes the run's record. A controller that
   * does not answer is asked again (a brief outage must not leave an orphan job behind), up to
   * STOP_WITHIN_MS. Says what came of it.
   */
  async #cancelNamed(jobName: string): Promise<string> {
    const deadline = Date.now() + STOP_WITHIN_MS;
    let failures = 0;
    for (;;) {
      try {
        const live = [...(await this.#slurm.named(jobName)).entries()].filter(([, job]) => !hasEnded(job)).map(([id]) => id);
        if (live.length === 0) return `any job named ${jobName} was cancelled`;
        await this.#slurm.cancel(live);
        failures = 0;
      } catch (err) {
        if (Date.now() > deadline) return `cancelling the jobs named ${jobName} failed too (${(err as Error).message})`;
        failures++;
      }
      if (Date.now() > deadline) return `the job named ${jobName} was cancelled but had not ended ${STOP_WITHIN_MS / 1000} s later`;
      await delay(Math.min(POLL_MS * 2 ** failures, 5_000));
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
      const ids = [...(await this.#slurm.named(jobName)).keys()];
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
    await this.#slurm.cancel([runner.jobId]);
    await within(runner.ended, STOP_WITHIN_MS);
  }

  /** Stops watching: the jobs run on, their runs end here as "lost" (the service is stopping, so their records stay as they are). */
  close(): void {
    this.#poller.close();
    this.#slurm.close();
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
