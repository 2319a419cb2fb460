import { Type } from '@sinclair/typebox';
import { ok } from '../../schemas/job-response.js';
import type { CapabilityFactory } from '../../app/capability-contract.js';
import { ValueError } from '../../core/errors.js';
import { defineJob } from '../../core/job.js';

/** What the probe Jobs of one service have observed; tests wait on these fields. */
export interface ProbeState {
  /** Resolves the `ticker` Job's second half once the test saw its first event downstream. */
  releaseTicker: () => void;
  holdStarted: boolean;
  holdAborted: boolean;
}

/**
 * Test-only Jobs that make forwarding observable: which service ran a call, a business failure,
 * a strict schema, a stream that waits for the test between two events, and a call that only
 * ends when its caller goes away.
 */
export function probeCapability(state: ProbeState): CapabilityFactory {
  return (env) => ({
    jobs: [
      defineJob({
        name: 'whoami',
        output: Type.String(),
        description: 'Answers the workspace of the service that ran the call.',
        input: Type.Object({}, { additionalProperties: false }),
        run: async () => ok(env.workspace, { ran_on: env.workspace }),
      }),
      defineJob({
        name: 'boom',
        output: Type.Null(),
        description: 'Always fails with a ValueError.',
        input: Type.Object({}, { additionalProperties: false }),
        run: async () => {
          throw new ValueError('probe failure requested');
        },
      }),
      defineJob({
        name: 'strict',
        output: Type.Integer(),
        description: 'Accepts exactly one integer n.',
        input: Type.Object({ n: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
        run: async (args) => ok(args.n * 2),
      }),
      defineJob({
        name: 'ticker',
        output: Type.String(),
        description: 'Emits one progress event, waits for the test, emits another.',
        input: Type.Object({}, { additionalProperties: false }),
        run: async (_args, ctx) => {
          const released = new Promise<void>((resolve) => (state.releaseTicker = resolve));
          await ctx.emit({ kind: 'progress', name: 'first', started_at: null, finished_at: null, percentage: 50 });
          await released;
          await ctx.emit({ kind: 'progress', name: 'second', started_at: null, finished_at: null, percentage: 100 });
          return ok('ticked');
        },
      }),
      defineJob({
        name: 'hold',
        output: Type.String(),
        description: 'Emits one event, then runs until its caller disconnects.',
        input: Type.Object({}, { additionalProperties: false }),
        run: async (_args, ctx) => {
          state.holdStarted = true;
          await ctx.emit({ kind: 'progress', name: 'holding', started_at: null, finished_at: null, percentage: null });
          await new Promise<void>((resolve) => {
            if (ctx.signal.aborted) return resolve();
            ctx.signal.addEventListener('abort', () => resolve(), { once: true });
          });
          state.holdAborted = true;
          return ok('released');
        },
      }),
    ],
  });
}

export function newProbeState(): ProbeState {
  return { releaseTicker: () => undefined, holdStarted: false, holdAborted: false };
}
