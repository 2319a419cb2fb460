import { isObject } from '../../../core/is-object.js';
import type { JobState } from './slurm-commands.js';
import type { SubmitJob, TransportConfig } from './slurm-transport.js';
import { V0038 } from './slurm-rest-v0038.js';

/**
 * What differs between slurmrestd's OpenAPI versions, behind one shape: paths, the submit body,
 * and the readers of answers. One adapter per version; the transport picks the one the server
 * offers (its `GET /openapi/v3` paths) and refuses, saying so, where it offers none of them.
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

/** The versions taskyard speaks, newest first. */
export const API_VERSIONS: readonly SlurmRestApi[] = [V0038];

/** Slurm's "Unable to contact slurm controller (connect failure)": the request never reached it. */
export const NOT_SENT_ERRORS: ReadonlySet<number> = new Set([1001, 1800]);

/** Slurm's "Invalid job id specified": the controller has no such job. */
export const INVALID_JOB_ID = 2017;

/**
 * The adapter for the newest version the server's OpenAPI document offers a submit path for; an
 * Error naming what it offers and what taskyard speaks when none fits.
 */
export function chooseApi(openapi: Record<string, unknown>): SlurmRestApi | Error {
  const paths = isObject(openapi['paths']) ? Object.keys(openapi['paths']) : [];
  const api = API_VERSIONS.find((candidate) => paths.includes(candidate.submitPath));
  if (api) return api;
  const offered = [...new Set(paths.map((path) => /^\/slurm\/(v[\d.]+)\//.exec(path)?.[1]).filter((v) => v !== undefined))];
  const speaks = API_VERSIONS.map((candidate) => candidate.version).join(', ');
  return new Error(`offers the Slurm OpenAPI ${offered.length ? offered.join(', ') : 'versions: none'}; taskyard speaks ${speaks} (load that plugin: slurmrestd -s openapi/${API_VERSIONS[0]!.version})`);
}

/** The errors an answer lists (`errors: [{error_number, error, description}]`). */
export function errorsOf(body: Record<string, unknown>): RestError[] {
  const errors = Array.isArray(body['errors']) ? body['errors'] : [];
  return errors.filter(isObject).map((e) => ({
    // 22.05 names it error_number in most answers, error_code in a submit's.
    number: typeof e['error_number'] === 'number' ? e['error_number'] : typeof e['error_code'] === 'number' ? e['error_code'] : -1,
    text: [e['error'], e['description']].filter((part) => typeof part === 'string' && part !== '').join(': ') || 'unspecified error',
  }));
}
