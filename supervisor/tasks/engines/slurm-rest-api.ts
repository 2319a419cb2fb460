import { isObject } from '../../../core/is-object.js';
import type { JobState } from './slurm-commands.js';
import type { SubmitJob, TransportConfig } from './slurm-transport.js';

/**
 * What differs between slurmrestd's OpenAPI versions, behind one shape: paths, the submit body,
 * and the readers of answers. One adapter per version (slurm-rest-v0038.ts); the transport picks
 * the one the server offers (slurm-rest-versions.ts).
 */
export interface SlurmRestApi {
  /** As the paths spell it: `v0.0.38`. */
  readonly version: string;
  readonly submitPath: string;
  /** All jobs (only where a job is looked for by name: it grows with the cluster). */
  readonly jobsPath: string;
  jobPath(jobId: string): string;
  submitBody(job: SubmitJob, config: TransportConfig): unknown;
  /** The job id a submit answered, or null. */
  jobIdOf(body: Record<string, unknown>): string | null;
  jobsOf(body: Record<string, unknown>): RestJob[];
}

/** One job as an answer lists it. */
export interface RestJob extends JobState {
  readonly id: string;
  readonly name: string;
  readonly user: string;
}

/** One error an answer carries (`errors`): Slurm's number and words. */
export interface RestError {
  readonly number: number;
  readonly text: string;
}

/** Slurm's "Unable to contact slurm controller (connect failure)": the request never reached it. */
export const NOT_SENT_ERRORS: ReadonlySet<number> = new Set([1001, 1800]);

/** Slurm's "Invalid job id specified": the controller has no such job. */
export const INVALID_JOB_ID = 2017;

/** The errors an answer lists (`errors: [{error_number, error, description}]`). */
export function errorsOf(body: Record<string, unknown>): RestError[] {
  const errors = Array.isArray(body['errors']) ? body['errors'] : [];
  return errors.filter(isObject).map((e) => ({
    // 22.05 names it error_number in most answers, error_code in a submit's.
    number: typeof e['error_number'] === 'number' ? e['error_number'] : typeof e['error_code'] === 'number' ? e['error_code'] : -1,
    text: [e['error'], e['description']].filter((part) => typeof part === 'string' && part !== '').join(': ') || 'unspecified error',
  }));
}
