import { LIMIT_WINDOW_MS } from '@chronicle/application';

/**
 * Limits count in fixed windows of 15 minutes (API.md): a test that counts up to a limit fails by
 * the clock when a window ends halfway, as the count starts again. So when fewer than `neededMs`
 * are left of this window, this waits for the next one.
 */
export async function clearOfLimitWindowEnd(neededMs = 15_000): Promise<void> {
  const left = LIMIT_WINDOW_MS - (Date.now() % LIMIT_WINDOW_MS);
  if (left < neededMs) await new Promise((resolve) => setTimeout(resolve, left + 100));
}
