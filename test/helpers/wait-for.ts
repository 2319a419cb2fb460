/** The first pause between checks, and the longest: checks start quick and slow down as the wait grows. */
const FIRST_PAUSE_MS = 10;
const LONGEST_PAUSE_MS = 80;

/**
 * Polls `condition` until it returns a truthy value or `timeoutMs` passes (then throws). The pause
 * between checks grows by half each time up to 80 ms: a condition met at once is seen within
 * ~10 ms, and a long wait (a Task running for seconds, each check a Job call or a /proc scan)
 * does not keep a core busy polling every 20 ms while other test files need it.
 */
export async function waitFor<T>(condition: () => T | Promise<T>, timeoutMs = 10_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(LONGEST_PAUSE_MS, pause * 1.5)) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pause));
  }
}
