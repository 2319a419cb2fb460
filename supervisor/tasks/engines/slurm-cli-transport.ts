import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseJobId, parseSqueue, sbatchArgs, showJob, slurm, SlurmCommandError, SQUEUE_FORMAT, type JobState } from './slurm-commands.js';
import { Bounded, SubmitUncertain, type SlurmTransport, type SubmitJob, type TransportConfig } from './slurm-transport.js';

/** How long an sbatch may take when `executor.sbatch_timeout_s` does not say (sbatch retries a silent controller for long). */
const SBATCH_TIMEOUT_S = 20;
/** sbatch processes at once: a burst is a queue of them, not hundreds of processes on a small machine. */
const SBATCH_AT_ONCE = 4;

/**
 * The client commands: sbatch with a script file and a NUL-separated environment file (written
 * privately for the moment of the submit: they hold the environment), squeue for the states of
 * this user's jobs, scontrol for one job, scancel.
 */
export class SlurmCliTransport implements SlurmTransport {
  readonly kind = 'cli';
  readonly #config: TransportConfig;
  readonly #env: NodeJS.ProcessEnv;
  readonly #scratch: string;
  readonly #submits = new Bounded(SBATCH_AT_ONCE);

  constructor(opts: { config: TransportConfig; env: NodeJS.ProcessEnv; scratch: string }) {
    this.#config = opts.config;
    this.#env = opts.env;
    this.#scratch = opts.scratch;
  }

  submit(job: SubmitJob): Promise<string> {
    return this.#submits.run(() => this.#sbatch(job));
  }

  async #sbatch(job: SubmitJob): Promise<string> {
    await mkdir(this.#scratch, { recursive: true, mode: 0o700 });
    const script = join(this.#scratch, `${job.runId}.sh`);
    const envFile = join(this.#scratch, `${job.runId}.env`);
    try {
      await writeFile(envFile, Object.entries(job.env).map(([k, v]) => `${k}=${v}\0`).join(''), { mode: 0o600 });
      await writeFile(script, job.script, { mode: 0o700 });
      const files = { jobName: job.jobName, cwd: job.cwd, logFile: job.logFile, envFile, script };
      let stdout: string;
      try {
        stdout = await slurm('sbatch', sbatchArgs(files, job.resources, this.#config), this.#env, (this.#config.sbatch_timeout_s ?? SBATCH_TIMEOUT_S) * 1000);
      } catch (err) {
        if (err instanceof SlurmCommandError && err.timedOut) throw new SubmitUncertain(err.message);
        throw err;
      }
      const jobId = parseJobId(stdout);
      if (jobId) return jobId;
      throw new SubmitUncertain(`sbatch printed no job id: ${JSON.stringify(stdout.trim().slice(0, 200))}`);
    } finally {
      // sbatch read both files before it returned: they are not needed afterwards.
      await Promise.all([rm(script, { force: true }), rm(envFile, { force: true })]);
    }
  }

  /** One squeue of this user's jobs (finished ones included, until MinJobAge), kept to the ids asked. */
  async states(jobIds: readonly string[]): Promise<Map<string, JobState>> {
    const listed = parseSqueue(await slurm('squeue', ['-h', '-t', 'all', '--me', '-o', SQUEUE_FORMAT], this.#env));
    const states = new Map<string, JobState>();
    for (const id of jobIds) {
      const state = listed.get(id);
      if (state) states.set(id, state);
    }
    return states;
  }

  show(jobId: string): Promise<JobState | 'unknown' | null> {
    return showJob(jobId, this.#env);
  }

  async named(jobName: string): Promise<Map<string, JobState>> {
    return parseSqueue(await slurm('squeue', ['-h', '-t', 'all', '--me', `--name=${jobName}`, '-o', SQUEUE_FORMAT], this.#env));
  }

  async cancel(jobIds: readonly string[]): Promise<void> {
    if (jobIds.length > 0) await slurm('scancel', jobIds, this.#env);
  }

  close(): void {}
}
