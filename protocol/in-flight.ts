import type { Handler } from './http.js';

/**
 * Counts the requests whose handler is still running, so a stopping service can let them finish
 * (within a bound) before it drops every connection. Idle keep-alive connections hold no
 * request, so they never delay the stop.
 */
export class InFlight {
  #count = 0;
  #idle: Array<() => void> = [];

  get count(): number {
    return this.#count;
  }

  /** The handler, counted. */
  wrap(handler: Handler): Handler {
    return async (req, res) => {
      this.#count++;
      try {
        await handler(req, res);
      } finally {
        if (--this.#count === 0) for (const wake of this.#idle.splice(0)) wake();
      }
    };
  }

  /** Resolves true once no request is running, or false when `ms` passed first. */
  settled(ms: number): Promise<boolean> {
    if (this.#count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.#idle = this.#idle.filter((w) => w !== wake);
        resolve(false);
      }, ms);
      this.#idle.push(wake);
    });
  }
}
