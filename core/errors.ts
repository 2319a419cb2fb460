import type { ValidationIssue } from '../schemas/validator.js';
import { closestNames } from './closest-names.js';

/**
 * A failure of the business operation itself. It reaches clients as HTTP 200 with
 * `success: false` and `answer: "<type>: <message>"`; the class names mirror the spec's.
 */
export class BusinessError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = type;
  }
}

const business = (type: string) =>
  class extends BusinessError {
    constructor(message: string) {
      super(type, message);
    }
  };

export const KeyError = business('KeyError');
export const ValueError = business('ValueError');
export const FileExistsError = business('FileExistsError');
export const FileNotFoundError = business('FileNotFoundError');
export const PermissionError = business('PermissionError');
export const TimeoutError = business('TimeoutError');
export const RuntimeError = business('RuntimeError');

/**
 * A protocol-level failure: the request never reached a Job (401, 404, 413, 422, 502 ...). It is
 * answered as `{detail, ...extra}`: `detail` keeps the spec's text, `extra` adds what helps a
 * person fix the call (the unknown Job's closest names).
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string | ValidationIssue[],
    readonly extra?: Readonly<Record<string, unknown>>,
  ) {
    super(typeof detail === 'string' ? detail : `HTTP ${status}`);
    this.name = 'HttpError';
  }
}

/** What an open service (`--no-token`) says about the Jobs it hides: why, and how to reach them. */
export const OPEN_SERVICE_NOTE = 'the service runs without a token (--no-token), so only Jobs with requires_auth=false are public; start it without --no-token (a token is generated), or set jobs.<name>.requires_auth: false in its config';

/** Beside the 404's `detail`: the name asked for, the closest public names, and why a known name is hidden. */
export interface UnknownJobInfo {
  name: string;
  closest: string[];
  /** Only when the Job exists but an open service hides it (OPEN_SERVICE_NOTE). */
  reason?: string;
}

/**
 * The spec's 404 `Unknown job`; given the name asked for, the answer also carries `unknown_job`
 * (UnknownJobInfo) with the closest of the `known` names, for a person to fix a typo.
 */
export function unknownJob(name?: string, known: Iterable<string> = [], reason?: string): HttpError {
  if (name === undefined) return new HttpError(404, 'Unknown job');
  const info: UnknownJobInfo = { name, closest: closestNames(name, known), ...(reason ? { reason } : {}) };
  return new HttpError(404, 'Unknown job', { unknown_job: info });
}
export const invalidToken = () => new HttpError(401, 'Invalid bearer token');

/**
 * Turns anything thrown inside a Job or a Task into the spec's `<ExceptionType>: <message>` text.
 * A BusinessError and the SDK's TaskError both name their type in `name`.
 */
export function describeError(err: unknown): string {
  if (err instanceof BusinessError) return `${err.type}: ${err.message}`;
  if (err instanceof Error) {
    // AbortError, TaskError and friends carry their type in `name`; plain Errors become RuntimeError.
    const type = err.name && err.name !== 'Error' ? err.name : 'RuntimeError';
    return `${type}: ${err.message}`;
  }
  return `RuntimeError: ${String(err)}`;
}

/** A configuration problem that stops the service from starting; the message names the field. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
