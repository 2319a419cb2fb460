import type { ExecutorSection } from '../../../schemas/config.js';
import type { TaskResources } from '../../../schemas/tasks.js';
import type { JobState } from './slurm-commands.js';

/**
 * How the Slurm executor talks to the cluster: submit, read the states of its own jobs, cancel.
 * Two transports implement it, the client commands (sbatch, squeue, scancel) and slurmrestd's
 * REST API, so the executor and its poller have one shape whichever the site offers.
 */

/** One batch job to submit: the run's name, files, command, environment and resources. */
export interface SubmitJob {
  /** Unique (jobNameOf): a job whose id was not heard can be found by it. */
  readonly jobName: string;
  readonly cwd: string;
  readonly logFile: string;
  /** The batch script (it `exec`s the runner). */
  readonly script: string;
  /** The job's whole environment. */
  readonly env: Readonly<Record<string, string>>;
  readonly resources: TaskResources;
  /** The run's id: names the transport's scratch files, where it has any. */
  readonly runId: string;
}

/**
 * A submit whose outcome is not known: the request may have reached the controller (a timeout, a
 * connection lost after sending). The executor then looks for the job by its name.
 */
export class SubmitUncertain extends Error {}

export interface SlurmTransport {
  /** 'cli' or 'rest', as logs and benches name it. */
  readonly kind: 'cli' | 'rest';
  /**
   * Queues the job and answers its id once the controller has it. Rejects with SubmitUncertain
   * where the job may have been queued all the same; any other rejection means it was not.
   */
  submit(job: SubmitJob): Promise<string>;
  /**
   * The states of these jobs (the service's own), as the controller shows them; a job it does
   * not list is absent from the map. Rejects (with the reason) while the controller does not answer.
   */
  states(jobIds: readonly string[]): Promise<Map<string, JobState>>;
  /** One job's state; 'unknown' when the controller has no such job; null when it did not answer. */
  show(jobId: string): Promise<JobState | 'unknown' | null>;
  /** The ids and states of this user's jobs of that name; rejects when the controller does not answer. */
  named(jobName: string): Promise<Map<string, JobState>>;
  /** Cancels these jobs; rejects with the reason when the controller refused or did not answer. */
  cancel(jobIds: readonly string[]): Promise<void>;
  /** Lets go of connections (the jobs run on). */
  close(): void;
}

/** The executor section a transport reads: partition, account, extra arguments, timeouts. */
export type TransportConfig = ExecutorSection;

/** `--time` takes minutes:seconds; the REST API whole minutes (rounded up: a limit is never cut). */
export function minutesOf(seconds: number): number {
  return Math.ceil(seconds / 60);
}

/**
 * At most `size` calls at once; the others wait their turn in order. A burst of submits goes out
 * as a bounded pipeline instead of hundreds of sbatch processes or requests at once.
 */
export class Bounded {
  readonly #size: number;
  #active = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(size: number) {
    this.#size = size;
  }

  async run<T>(call: () => Promise<T>): Promise<T> {
    if (this.#active >= this.#size) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#active++;
    try {
      return await call();
    } finally {
      // The slot passes straight to the next caller, so #active stays counted.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#active--;
    }
  }
}
