/** An exponential back-off: the wait doubles per failed attempt, from `initialMs` up to `maxMs`. */
export interface BackOff {
  initialMs: number;
  /** No wait grows past this (none: unbounded, for callers that bound their attempts). */
  maxMs?: number;
  /**
   * Spreads the waits of many clients that failed together, so they do not retry in lock-step:
   * `full` waits anywhere below the delay, `equal` in its upper half (whole milliseconds).
   */
  jitter?: 'full' | 'equal';
}

/** Beyond this many doublings every delay in use has long reached its maximum. */
const MAX_DOUBLINGS = 30;

/** The wait before retrying after failed attempt `attempt` (1 for the first failure). */
export function backOffDelay(attempt: number, backOff: BackOff): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, MAX_DOUBLINGS);
  const delay = Math.min(backOff.maxMs ?? Infinity, backOff.initialMs * 2 ** exponent);
  switch (backOff.jitter) {
    case 'full':
      return Math.random() * delay;
    case 'equal':
      return Math.round(delay / 2 + (Math.random() * delay) / 2);
    default:
      return delay;
  }
}
