import { rm, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { within } from '../../workers/within.js';
import type { ExecutorSection } from '../../schemas/config.js';
import { readJsonObject } from '../json-file.js';
import { RUNNER } from '../../runner/runner-file.js';
import { RUN_FLAG } from '../../runner/spawner-messages.js';
import { writeJsonAtomic } from '../../core/task-record/record-files.js';
import type { Executor, LeftRun, StartSpec, Runner, RunnerEnd } from './executor.js';
import { endOfJob, parseJobId, parseSqueue, sbatchArgs, slurm, SQUEUE_FORMAT, type JobState } from './slurm-commands.js';

/** The file beside a run's record that names its Slurm job (TaskStatus keeps only the spec's fields). */
export const SLURM_JOB_FILE = 'slurm_job.json';
/** How often the jobs of live runs are looked up (one squeue for all of them). */
const POLL_MS = 500;
/** After scancel, how long to wait for the job to end (the cluster's KillWait is usually 30 s or less). */
const STOP_WITHIN_MS = 120_000;

interface Watched {
  readonly jobId: string;
  cancelled: boolean;
  resolve(end: RunnerEnd): void;
}

/** Single-quotes a value for /bin/sh. */
const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/**
 * Runs each Task as one Slurm batch job whose script `exec`s the task runner, so `scancel`'s
 * SIGTERM (and SIGKILL after KillWait) reaches the runner itself. The job's environment comes from
 * a NUL-separated file, its output goes to `task.log`, its working directory is the Task directory;
 * the job id is kept in `slurm_job.json` beside the record. One poller reads every watched job's
 * state with squeue; a job Slurm ended without a terminal record ends its run with Slurm's reason.
 */
export class SlurmExecutor implements Executor {
  readonly kind = 'slurm';
  readonly queuesRuns = true;
  readonly #config: ExecutorSection;
  readonly #baseEnv: NodeJS.ProcessEnv;
  readonly #scratch: string;
  readonly #watched = new Map<string, Watched>();
  readonly #byRunner = new WeakMap<Runner, Watched>();
  #polling = false;
  #closed = false;
  #warned = false;

  /** `scratch` holds job scripts and environment files for the moment of a submit (private: they hold the environment). */
  constructor(opts: { config: ExecutorSection; env: NodeJS.ProcessEnv; scratch: string }) {
    this.#config = opts.config;
    this.#baseEnv = opts.env;
    this.#scratch = opts.scratch;
  }

  async start(spec: StartSpec): Promise<Runner> {
    await mkdir(this.#scratch, { recursive: true, mode: 0o700 });
    const script = join(this.#scratch, `${spec.runId}.sh`);
    const envFile = join(this.#scratch, `${spec.runId}.env`);
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries({ ...this.#baseEnv, ...spec.env, TASKYARD_TASK_DIR: spec.cwd })) if (value !== undefined) env[name] = value;
    try {
      await writeFile(envFile, Object.entries(env).map(([k, v]) => `${k}=${v}\0`).join(''), { mode: 0o600 });
      // exec: the runner is the job's process, so scancel signals it (not a shell that would die first).
      await writeFile(script, `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(RUNNER)} ${RUN_FLAG} ${spec.runId}\n`, { mode: 0o700 });
      const files = { jobName: spec.taskId, cwd: spec.cwd, logFile: spec.logFile, envFile, script };
      // sbatch reads both files before it returns: they are not needed afterwards.
      const jobId = parseJobId(await slurm('sbatch', sbatchArgs(files, spec.resources, this.#config), this.#baseEnv));
      await writeJsonAtomic(join(spec.cwd, SLURM_JOB_FILE), { job_id: jobId, run_id: spec.runId });
      return this.#watch(jobId);
    } finally {
      await Promise.all([rm(script, { force: true }), rm(envFile, { force: true })]);
    }
  }

  async adopt(runs: readonly LeftRun[]): Promise<Map<string, Runner>> {
    const adopted = new Map<string, Runner>();
    const jobs = new Map<string, string>();
    for (const run of runs) {
      const jobId = await readJobId(run);
      if (jobId) jobs.set(run.runId, jobId);
    }
    if (jobs.size === 0) return adopted;
    const states = await this.#squeue();
    for (const [runId, jobId] of jobs) {
      // Unknown to squeue (or squeue unreachable): no runner, the run is settled as lost.
      if (states?.has(jobId)) adopted.set(runId, this.#watch(jobId));
    }
    return adopted;
  }

  async stop(runner: Runner): Promise<void> {
    const watched = this.#byRunner.get(runner);
    if (!watched) return;
    watched.cancelled = true;
    await slurm('scancel', [watched.jobId], this.#baseEnv);
    await within(runner.ended, STOP_WITHIN_MS);
  }

  /** Stops watching: the jobs run on, their runs end here as "lost" (the service is stopping, so their records stay as they are). */
  close(): void {
    this.#closed = true;
    for (const watched of this.#watched.values()) watched.resolve({ kind: 'lost', pid: null });
    this.#watched.clear();
  }

  #watch(jobId: string): Runner {
    let resolve!: (end: RunnerEnd) => void;
    const ended = new Promise<RunnerEnd>((r) => (resolve = r));
    const watched: Watched = { jobId, cancelled: false, resolve };
    this.#watched.set(jobId, watched);
    const runner: Runner = { pid: null, ended };
    this.#byRunner.set(runner, watched);
    void this.#poll();
    return runner;
  }

  /** One loop while any job is watched: a squeue per round, ended jobs resolved and dropped. */
  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      while (this.#watched.size > 0 && !this.#closed) {
        const states = await this.#squeue();
        for (const [jobId, watched] of states ? this.#watched : []) {
          const end = endOfJob(jobId, states!.get(jobId), watched.cancelled);
          if (!end) continue;
          this.#watched.delete(jobId);
          watched.resolve(end);
        }
        if (this.#watched.size > 0) await delay(POLL_MS);
      }
    } finally {
      this.#polling = false;
    }
  }

  /** Every job of this user; null while the controller does not answer (the runs stay as they are). */
  async #squeue(): Promise<Map<string, JobState> | null> {
    try {
      const states = parseSqueue(await slurm('squeue', ['-h', '-t', 'all', '--me', '-o', SQUEUE_FORMAT], this.#baseEnv));
      this.#warned = false;
      return states;
    } catch (err) {
      if (!this.#warned) console.error(`taskyard: reading Slurm job states failed (${(err as Error).message}); trying again`);
      this.#warned = true;
      return null;
    }
  }
}

/** The job id a run's `slurm_job.json` names, when it names this run (read without following links). */
async function readJobId(run: LeftRun): Promise<string | null> {
  const job = await readJsonObject(join(run.dir, SLURM_JOB_FILE));
  return job?.['run_id'] === run.runId && typeof job['job_id'] === 'string' ? job['job_id'] : null;
}
