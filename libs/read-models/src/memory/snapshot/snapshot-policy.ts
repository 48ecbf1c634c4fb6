/** When the read models' snapshot is written again. */
export interface SnapshotPolicyOptions {
  /** Events the checkpoint must have moved past the last snapshot: what a restart replays at most, about. */
  everyEvents: number;
  /** Largest share of the time spent writing snapshots (0 to 1): a big store writes less often. */
  maxTimeShare: number;
}

export interface SnapshotState {
  /** Events applied since the last snapshot (its checkpoint to the current one). */
  eventsSince: number;
  /** Milliseconds since the last write ended (successful or not); Infinity before the first. */
  msSinceLast: number;
  /** How long the last write took, ms; 0 before the first. */
  lastDurationMs: number;
  /** A write is under way. */
  writing: boolean;
}

export const DEFAULT_SNAPSHOT_POLICY: SnapshotPolicyOptions = { everyEvents: 50_000, maxTimeShare: 0.05 };

/**
 * Whether a snapshot is due: enough events since the last one, and the pause since the last write
 * long enough that writing takes at most `maxTimeShare` of the time (a write of `d` ms is
 * followed by at least d × (1 / share − 1) ms without one). One write at a time.
 */
export function snapshotDue(state: SnapshotState, policy: SnapshotPolicyOptions): boolean {
  if (state.writing || state.eventsSince < policy.everyEvents) return false;
  return state.msSinceLast >= pauseAfter(state.lastDurationMs, policy);
}

/** The least time between the end of a write of `durationMs` and the start of the next. */
export function pauseAfter(durationMs: number, policy: SnapshotPolicyOptions): number {
  return durationMs * (1 / policy.maxTimeShare - 1);
}
