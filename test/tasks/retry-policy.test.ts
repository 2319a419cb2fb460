import t from 'tap';
import type { TaskStatus } from '../../schemas/tasks.js';
import { failureCause, retryDelay, shouldRetry } from '../../supervisor/tasks/runs/retry-policy.js';
import { defineTask, DefinitionError } from '../../runner/task-sdk.js';

const failed = { state: 'failed', exit_code: 1 } as TaskStatus;

t.test('a failure is named by who wrote its record and how the run ended', async (t) => {
  t.equal(failureCause(failed, undefined, false), 'exit_code', 'the code wrote it: only its exit code may be retried');
  t.equal(failureCause(failed, { kind: 'exited', code: 0, signal: null }, false), 'exit_code', 'the runner exited after writing it');
  t.equal(failureCause(failed, { kind: 'exited', code: null, signal: 'SIGKILL' }, true), 'lost', 'the runner was killed');
  t.equal(failureCause(failed, { kind: 'lost', pid: 4 }, true), 'lost');
  t.equal(failureCause(failed, { kind: 'not-started' }, true), 'lost', 'queued when the service stopped');
  t.equal(failureCause(failed, { kind: 'spawn-failed', message: 'EAGAIN' }, true), 'lost');
  t.equal(failureCause(failed, { kind: 'time-limit', seconds: 1 }, false), 'timeout', 'stopped at its limit, whoever wrote the record');
  t.equal(failureCause(failed, { kind: 'engine-ended', reason: 'x', cause: 'node_fail' }, true), 'node_fail');
  t.equal(failureCause(failed, { kind: 'engine-ended', reason: 'scancel' }, true), null, 'an outside scancel is not retried');
  t.equal(failureCause(failed, { kind: 'cancel' }, true), null);
  t.equal(failureCause({ ...failed, state: 'cancelled' }, { kind: 'cancel' }, true), null);
  t.equal(failureCause({ ...failed, state: 'succeeded' }, undefined, false), null);
});

t.test('a policy retries what it names while attempts are left, with a doubling bounded backoff', async (t) => {
  const policy = { max: 2, on: ['lost' as const], exit_codes: [75], backoff_s: 5 };
  t.equal(shouldRetry(policy, 1, 'lost', 1), true);
  t.equal(shouldRetry(policy, 2, 'lost', 1), true);
  t.equal(shouldRetry(policy, 3, 'lost', 1), false, 'max 2: the third attempt is the last');
  t.equal(shouldRetry(policy, 1, 'timeout', 1), false, 'timeout is not named');
  t.equal(shouldRetry(policy, 1, 'exit_code', 75), true);
  t.equal(shouldRetry(policy, 1, 'exit_code', 1), false, 'an exception (exit 1) is not retried unless 1 is listed');
  t.equal(shouldRetry(undefined, 1, 'lost', 1), false, 'no policy, no retry');
  t.same([1, 2, 3].map((a) => retryDelay(policy, a)), [5, 10, 20]);
  t.equal(retryDelay({ ...policy, backoff_s: 3000 }, 5), 3600, 'never more than an hour');
});

t.test("a definition's retries and cache are checked, with defaults filled", async (t) => {
  const valid = { name: 'retrying', taskType: 'fixture', description: 'A Task used to check retry policies.', input: { type: 'object', properties: {} }, output: { type: 'object', properties: {} }, run: () => ({}) };
  t.same(defineTask({ ...valid, retries: { max: 2 }, cache: true }).retries, { max: 2, on: ['lost', 'node_fail'], exit_codes: [], backoff_s: 0 });
  t.equal(defineTask(valid).retries, undefined, 'none declared: none listed');
  const refused = (retries: unknown, message: RegExp) => t.throws(() => defineTask({ ...valid, retries } as never), { name: 'DefinitionError', message }, JSON.stringify(retries));
  refused({ max: -1 }, /retries.max must be an integer from 0 to 100/);
  refused({ max: 1, on: ['oom'] }, /retries.on must be an array of lost, node_fail, timeout/);
  refused({ max: 1, exit_codes: [0] }, /retries.exit_codes must be an array of integers from 1 to 255/);
  refused({ max: 1, backoff_s: -2 }, /retries.backoff_s must be a number of seconds/);
  refused({ max: 1, tries: 3 }, /retries.tries is unknown; use max, on, exit_codes, backoff_s/);
  refused(3, /retries must be an object/);
  t.throws(() => defineTask({ ...valid, cache: 'yes' } as never), DefinitionError);
});
