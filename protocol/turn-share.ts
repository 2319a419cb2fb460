/**
 * One share of each event-loop turn for work that can arrive faster than it is done (the streams
 * forwarded from targets): all such work together runs for about SLICE_MS per turn, then waits for
 * the next turn, so a request that arrives meanwhile (a `/health`) waits for one short slice
 * however many streams run, and however slow each byte is (code not yet optimised, a busy core).
 * Counting bytes instead of time bounded each stream alone: five streams made five slices a turn.
 */

/** Milliseconds of such work per turn of the event loop, all of it together. */
export const SLICE_MS = 3;

/** When this turn's slice began (performance.now()), or -1 before any work in this turn. */
let sliceStart = -1;

const endTurn = (): void => {
  sliceStart = -1;
};

/**
 * Whether the caller may do one more piece of work in this turn (a piece should be short: one
 * chunk of a stream). The first caller of a turn starts its slice.
 */
export function mayWork(): boolean {
  if (sliceStart === -1) {
    sliceStart = performance.now();
    // Immediates run in order: this one ends the slice before the work waiting in nextTurn resumes.
    setImmediate(endTurn);
    return true;
  }
  return performance.now() - sliceStart < SLICE_MS;
}

/** Resolves in the next turn of the event loop, after its I/O (the requests that waited) was handled. */
export { setImmediate as nextTurn } from 'node:timers/promises';
