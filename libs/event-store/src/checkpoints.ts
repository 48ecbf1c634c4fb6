import { CheckpointBeyondHeadError, EventStore } from './event-store.port';
import { comparePositions, formatPosition, Position, positionProblem } from './position';

/**
 * Where a consumer resumes from its stored checkpoint, checked against the log once at start:
 * - a checkpoint no log can hold (at or above 2^63, left by the 24.x server bug) is absent, with a
 *   warning: the consumer starts from the beginning, and its handlers are idempotent;
 * - a checkpoint beyond the log's last record throws CheckpointBeyondHeadError: following on would
 *   silently skip every event up to it.
 */
export async function resumePosition(
  store: EventStore,
  consumer: string,
  stored: Position | null,
  warn: (message: string) => void,
): Promise<Position | null> {
  if (stored === null) return null;
  const problem = positionProblem(stored);
  if (problem !== null) {
    warn(
      `The stored checkpoint of ${consumer} (${formatPosition(stored)}) names no position of any log ` +
        `(${problem}); starting from the beginning`,
    );
    return null;
  }
  const end = await store.endPosition();
  // (0, 0) names the start of the log, also of an empty one.
  const beyond = end === null ? stored.commit > 0n : comparePositions(stored, end) > 0;
  if (beyond) {
    throw new CheckpointBeyondHeadError(consumer, formatPosition(stored), end && formatPosition(end));
  }
  return stored;
}
