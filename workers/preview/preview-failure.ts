/**
 * A business failure raised inside a pool thread. Errors lose their class crossing the thread
 * boundary, so the worker returns it as data (`PreviewOutcome`) and the supervisor rethrows it as
 * a BusinessError of the same type.
 */
export class PreviewFailure extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** An answer or a business failure as data: error classes do not survive the thread boundary. */
export type PoolOutcome<A> = { ok: true; answer: A } | { ok: false; type: string; message: string };

/** Runs a pool handler's work: its answer, or its PreviewFailure as data; anything else is thrown. */
export async function outcomeOf<A>(work: Promise<A>): Promise<PoolOutcome<A>> {
  try {
    return { ok: true, answer: await work };
  } catch (err) {
    if (err instanceof PreviewFailure) return { ok: false, type: err.type, message: err.message };
    throw err;
  }
}
