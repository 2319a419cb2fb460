import type { JobEvent } from '../schemas/events.js';
import type { CallerTag } from './caller.js';
import { LazyJobContext, type JobContext } from './job.js';

/**
 * The fan-out seam between a caller that reads events (the SSE writer) and a writer to many
 * callers at once (a Task's broadcaster). Many followers of one Task receive the same events: an
 * SSE caller that can take them as one shared batch (its bytes built once for all of them, written
 * without a promise) says so through its context, and a Job that broadcasts asks for it here. It
 * is a speed-only capability, so it stays out of JobContext: every Job works with `emit` alone.
 */

/**
 * What a shared write did: 'sent' (written, the caller takes more at once), 'full' (written, but
 * the caller is backpressured: later events go through `emit`, which waits), 'refused' (not
 * written: the caller is gone, or an earlier write is still under way).
 */
export type SharedWrite = 'sent' | 'full' | 'refused';

/**
 * Writes events that many callers receive alike (the same array, never changed afterwards, so its
 * bytes are built once for all of them) at once, without a promise. 'refused' and 'full' send the
 * caller back to `emit`.
 */
export type EmitShared = (events: readonly JobEvent[]) => SharedWrite;

/** The context of a caller that reads events and takes shared writes (an SSE caller). */
class SharingJobContext extends LazyJobContext {
  constructor(
    sources: () => AbortSignal[],
    emit: JobContext['emit'],
    readonly emitShared: EmitShared,
    caller: CallerTag | undefined,
  ) {
    super(sources, true, emit, caller);
  }
}

/** A streaming JobContext whose caller also takes shared writes (see EmitShared). */
export function createSharingJobContext(sources: () => AbortSignal[], emit: JobContext['emit'], emitShared: EmitShared, caller?: CallerTag): JobContext {
  return new SharingJobContext(sources, emit, emitShared, caller);
}

/** The shared write of the caller behind `ctx`, when it takes them; undefined sends every event through `emit`. */
export function emitSharedOf(ctx: JobContext): EmitShared | undefined {
  return ctx instanceof SharingJobContext ? ctx.emitShared : undefined;
}
