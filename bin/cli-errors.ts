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

/**
 * Runs one command body with the CLI's error convention, so every command reports alike: a usage
 * error prints the message (and the command's usage) and exits 2; a refused or impossible call
 * prints the message and exits 1. Other errors are bugs and propagate.
 */
export async function runCommand(prefix: string, usage: string | undefined, body: () => Promise<number>, failures: ReadonlyArray<abstract new (...args: never[]) => Error> = []): Promise<number> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`${prefix}: ${err.message}${usage ? `\n\n${usage}` : ''}`);
      return EXIT.usage;
    }
    if (err instanceof CallError || failures.some((type) => err instanceof type)) {
      console.error(`${prefix}: ${(err as Error).message}`);
      return EXIT.failure;
    }
    throw err;
  }
}
