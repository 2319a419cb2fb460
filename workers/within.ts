/** Waits for `promise`, but no longer than `ms` (its outcome, value or error, is not reported). */
export async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  await Promise.race([promise.catch(() => undefined), expired]);
  clearTimeout(timer);
}
