import type { Api } from '../api/client.js';
import type { Location } from './router.js';

/** What a page gets when it is shown. */
export interface PageContext {
  readonly api: Api;
  readonly location: Location;
  /**
   * Aborted when the page is left (or re-rendered for another target): pages tie their timers,
   * fetches and event streams to it, so nothing keeps running behind the user's back.
   */
  readonly signal: AbortSignal;
}

/** A page renders into a container it owns; it may keep updating it until `signal` aborts. */
export type Page = (container: HTMLElement, ctx: PageContext) => void;

/** Runs `tick` now and then every `ms` until `signal` aborts, pausing while the tab is hidden. */
export function every(ms: number | (() => number), signal: AbortSignal, tick: () => Promise<void> | void): void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const delay = () => (typeof ms === 'number' ? ms : ms());
  const run = async () => {
    timer = undefined;
    if (signal.aborted) return;
    if (document.visibilityState !== 'hidden') {
      try {
        await tick();
      } catch {
        // The tick shows its own errors; the loop keeps going so a blip does not stop updates.
      }
    }
    if (!signal.aborted) timer = setTimeout(run, delay());
  };
  signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  void run();
}

/** Resolves after `ms` unless `signal` aborts first. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
