import { Type } from '@sinclair/typebox';
import { ok } from '../../schemas/job-response.js';
import type { CapabilityFactory } from '../../app/capability-contract.js';
import { KeyError } from '../../core/errors.js';
import { defineJob } from '../../core/job.js';

/** The answer schema of each test Job (the typed test client's entries for them). */
export const TEST_JOB_ANSWERS = {
  echo: Type.Unknown(),
  explode: Type.Null(),
  chatty: Type.Integer(),
  hang: Type.String(),
  malformed: Type.Unknown(),
  quiet: Type.String(),
  open: Type.String(),
} as const;

/** Observations the test Jobs make, for tests to assert on. */
export const observed = { aborted: 0, started: 0 };

/** Jobs that exercise the transports' rules: errors, events, aborts, bad results. */
export const testJobs: CapabilityFactory = () => ({
  jobs: [
    defineJob({
      name: 'echo',
      output: TEST_JOB_ANSWERS.echo,
      description: 'Answers its arguments.',
      input: Type.Object({ text: Type.String({ minLength: 1 }), times: Type.Integer({ minimum: 1, default: 1 }) }, { additionalProperties: false }),
      run: async (args) => ok(args),
    }),
    defineJob({
      name: 'explode',
      output: TEST_JOB_ANSWERS.explode,
      description: 'Emits one progress event, then throws a KeyError.',
      input: Type.Object({}),
      run: async (_args, ctx) => {
        await ctx.emit({ kind: 'progress', name: 'before', started_at: null, finished_at: null, percentage: 50 });
        throw new KeyError("'missing-thing'");
      },
    }),
    defineJob({
      name: 'chatty',
      output: TEST_JOB_ANSWERS.chatty,
      description: 'Emits `count` progress events of `pad` extra bytes each.',
      input: Type.Object({ count: Type.Integer({ minimum: 0 }), pad: Type.Integer({ minimum: 0, default: 0 }) }),
      run: async (args, ctx) => {
        const filler = 'x'.repeat(args.pad);
        for (let i = 0; i < args.count && !ctx.signal.aborted; i++) {
          await ctx.emit({ kind: 'progress', name: `step ${i}${filler}`, started_at: null, finished_at: null, percentage: (100 * i) / Math.max(1, args.count) });
        }
        return ok(args.count);
      },
    }),
    defineJob({
      name: 'hang',
      output: TEST_JOB_ANSWERS.hang,
      description: 'Waits until its invocation is aborted.',
      input: Type.Object({}),
      run: async (_args, ctx) => {
        observed.started++;
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        observed.aborted++;
        return ok('aborted');
      },
    }),
    defineJob({
      name: 'malformed',
      output: TEST_JOB_ANSWERS.malformed,
      description: 'Returns something that is not a JobResponse.',
      input: Type.Object({}),
      run: async () => undefined as never,
    }),
    defineJob({
      name: 'quiet',
      output: TEST_JOB_ANSWERS.quiet,
      description: 'A Job whose event route is disabled.',
      input: Type.Object({}),
      flags: { enable_stream: false },
      run: async () => ok('quiet'),
    }),
    defineJob({
      name: 'open',
      output: TEST_JOB_ANSWERS.open,
      description: 'A Job that needs no auth.',
      input: Type.Object({}),
      flags: { requires_auth: false },
      run: async () => ok('open'),
    }),
  ],
});
