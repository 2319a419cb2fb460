import type { ValidationIssue } from '../schemas/validator.js';

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

/** A protocol-level failure: the request never reached a Job (401, 404, 413, 422, 502 ...). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string | ValidationIssue[],
  ) {
    super(typeof detail === 'string' ? detail : `HTTP ${status}`);
    this.name = 'HttpError';
  }
}

export const unknownJob = () => new HttpError(404, 'Unknown job');
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
