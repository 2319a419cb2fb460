import type { RetryCause, TaskRetries, TaskStatus } from '../../../schemas/tasks.js';
import type { EndReason } from './run-state.js';

/** Which rule of a retry policy a failed attempt matches. */
export type FailureCause = RetryCause | 'exit_code';

/** The longest wait between attempts, however often the backoff doubled. */
const MAX_DELAY_S = 3600;

/**
 * Why an attempt failed, in the policy's words. `decidedHere`: the service wrote the terminal
 * record because the runner did not (it died, was stopped, never started): the machine's
 * failure, named by how the run ended. Otherwise the Task's code wrote it (an exception, a
 * command's exit code): the code's failure, retried only by exit code. Null: never retried
 * (a success, a cancel, the service stopping, an outside scancel).
 */
export function failureCause(status: TaskStatus, reason: EndReason | undefined, decidedHere: boolean): FailureCause | null {
  if (status.state !== 'failed') return null;
  // Stopped at its time limit: whoever wrote the record, the limit ended it.
  if (reason?.kind === 'time-limit') return 'timeout';
  if (!decidedHere) return 'exit_code';
  switch (reason?.kind) {
    case 'lost':
    case 'exited':
    case 'spawn-failed':
    case 'not-started':
      return 'lost';
    case 'engine-ended':
      return reason.cause ?? null;
    default:
      return null;
  }
}

/**
 * Whether attempt number `attempt` (from 1), failed for `cause`, is tried again: the policy names
 * the cause (or the exit code) and attempts are left.
 */
export function shouldRetry(policy: TaskRetries | undefined, attempt: number, cause: FailureCause | null, exitCode: number): boolean {
  if (!policy || cause === null || attempt > policy.max) return false;
  return cause === 'exit_code' ? policy.exit_codes.includes(exitCode) : policy.on.includes(cause);
}

/** Seconds before the attempt after `attempt` is queued: `backoff_s`, doubled for each retry before. */
export function retryDelay(policy: TaskRetries, attempt: number): number {
  return Math.min(policy.backoff_s * 2 ** (attempt - 1), MAX_DELAY_S);
}
