/**
 * Hearing that a caller went away, without an AbortSignal. Node's AbortController is costly to
 * make and to listen to (an EventTarget with bookkeeping of its own): making one per forwarded
 * call and listening to it took a forwarder ~12 of its ~44 µs of CPU per call. Front ends give
 * every request one of these; an AbortSignal is adapted where one exists anyway.
 */
export interface AbortHook {
  /** True once aborted. */
  readonly aborted: boolean;
  /** Why it was aborted (undefined before). */
  readonly reason: unknown;
  /** Calls `onAbort` once, when aborted later; a hook already aborted never calls it (check `aborted` first). */
  listen(onAbort: () => void): void;
  /** Stops calling `onAbort`. */
  unlisten(onAbort: () => void): void;
}

/** An AbortSignal seen as a hook. */
export function hookOf(signal: AbortSignal): AbortHook {
  return {
    get aborted() {
      return signal.aborted;
    },
    get reason() {
      return signal.reason as unknown;
    },
    listen: (onAbort) => signal.addEventListener('abort', onAbort, { once: true }),
    unlisten: (onAbort) => signal.removeEventListener('abort', onAbort),
  };
}

/** A hook a front end aborts itself, when the client disconnects. */
export class AbortPoint implements AbortHook {
  aborted = false;
  reason: unknown = undefined;
  #listeners: Array<() => void> | undefined;

  listen(onAbort: () => void): void {
    (this.#listeners ??= []).push(onAbort);
  }

  unlisten(onAbort: () => void): void {
    const listeners = this.#listeners;
    const at = listeners ? listeners.indexOf(onAbort) : -1;
    if (at !== -1) listeners!.splice(at, 1);
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners) for (const onAbort of listeners) onAbort();
  }
}
