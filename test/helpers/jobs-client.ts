import type { AnswerIn, AnswersOf, JobAnswers } from '../../schemas/job-answers.js';
import type { JobResponseOf } from '../../schemas/job-response.js';
import type { TEST_JOB_ANSWERS } from './test-jobs.js';

/** Every Job a test service may serve by name: the built-in ones and the test Jobs (test-jobs.ts). */
export type TestJobAnswers = JobAnswers & AnswersOf<typeof TEST_JOB_ANSWERS>;
export type TestJobName = keyof TestJobAnswers;

/**
 * The answer of Job `N`: typed from its schema for a Job in the map, `unknown` for a Job a test
 * defines itself (or a name that is no Job), which the test narrows with a check.
 */
export type AnswerOf<N extends string> = AnswerIn<TestJobAnswers, N>;

/**
 * The parsed body of a call to Job `N`, its answer typed as the Job's answer. On a business
 * failure (`success: false`) the answer is the error text instead: read it after `success`.
 */
export type ReplyOf<N extends string> = JobResponseOf<AnswerOf<N>>;

/**
 * A name accepted by a test client's `call`: a known Job's name (offered by the editor) or any
 * other string (a test's own Job, an unknown name), whose answer is then `unknown`.
 */
export type CalledName = TestJobName | (string & {});

/**
 * A JobResponse of Job `name` read from JSON text (what the CLI prints), its answer typed like a
 * `call`'s: the one cast at that boundary, as in the client.
 */
export function parseReply<N extends CalledName>(_name: N, text: string): ReplyOf<N> {
  return JSON.parse(text) as ReplyOf<N>;
}
