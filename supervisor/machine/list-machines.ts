import type { TargetEntry } from '../../schemas/config.js';
import type { MachineHealth } from '../../schemas/machine.js';

/** A slow target is reported unhealthy rather than holding up the whole answer. */
export const HEALTH_TIMEOUT_MS = 3_000;

/**
 * Asks one target's `GET /health` with the token stored for it. Any network error, timeout,
 * rejected token (401) or answer other than `{running: true}` means unhealthy; nothing throws.
 */
export async function checkTarget(target: TargetEntry, signal: AbortSignal, timeoutMs = HEALTH_TIMEOUT_MS): Promise<MachineHealth> {
  // Not AbortSignal.any([signal, AbortSignal.timeout(ms)]): on Node 20 nothing holds the timeout
  // signal, a garbage collection drops it, and the check of a silent target then never ends
  // (reproduced: 40 of 40 hung with collections running). The timer holds this controller.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const stop = () => deadline.abort();
  signal.addEventListener('abort', stop, { once: true });
  try {
    const response = await fetch(`${target.address}/health`, {
      headers: { accept: 'application/json', ...(target.token ? { authorization: `Bearer ${target.token}` } : {}) },
      signal: deadline.signal,
      redirect: 'error',
    });
    const body = (await response.json()) as { success?: unknown; answer?: { running?: unknown } };
    return { address: target.address, healthy: response.status === 200 && body.success === true && body.answer?.running === true };
  } catch {
    return { address: target.address, healthy: false };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', stop);
  }
}

/** Health of every configured target, checked concurrently, in configuration order. */
export function checkTargets(targets: Iterable<TargetEntry>, signal: AbortSignal): Promise<MachineHealth[]> {
  return Promise.all([...targets].map((t) => checkTarget(t, signal)));
}
