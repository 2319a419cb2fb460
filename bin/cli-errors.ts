/** A mistake in the command line: exit code 2, with a message that says how to fix it. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The call could not be made or was refused (network, HTTP status): exit code 1. */
export class CallError extends Error {
  override name = 'CallError';
}

/** Exit codes of `taskyard <job>`. */
export const EXIT = Object.freeze({ success: 0, failure: 1, usage: 2 } as const);
