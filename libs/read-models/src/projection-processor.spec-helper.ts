import { comparePositions, Position } from '@chronicle/event-store';

/**
 * Whether `processor` has committed `position` within `timeoutMs` (a generous ceiling, not a time
 * the test expects), read from its public position, polled on real timers.
 */
export async function reaches(
  processor: { readonly position: Position | null },
  position: Position,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const at = processor.position;
    if (at !== null && comparePositions(at, position) >= 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
