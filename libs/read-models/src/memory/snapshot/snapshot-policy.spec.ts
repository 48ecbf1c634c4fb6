import { pauseAfter, snapshotDue, SnapshotState } from './snapshot-policy';

const policy = { everyEvents: 1000, maxTimeShare: 0.05 };
const state = (changes: Partial<SnapshotState>): SnapshotState => ({
  eventsSince: 1000,
  msSinceLast: Number.POSITIVE_INFINITY,
  lastDurationMs: 0,
  writing: false,
  ...changes,
});

describe('snapshotDue', () => {
  it('is due once enough events have been applied since the last snapshot', () => {
    expect(snapshotDue(state({ eventsSince: 999 }), policy)).toBe(false);
    expect(snapshotDue(state({ eventsSince: 1000 }), policy)).toBe(true);
  });

  it('is never due while a write is under way', () => {
    expect(snapshotDue(state({ writing: true, eventsSince: 10 ** 9 }), policy)).toBe(false);
  });

  it('keeps writing to at most its share of the time: a write of d ms waits d × 19 ms after it', () => {
    expect(snapshotDue(state({ lastDurationMs: 100, msSinceLast: 1899 }), policy)).toBe(false);
    expect(snapshotDue(state({ lastDurationMs: 100, msSinceLast: 1900 }), policy)).toBe(true);
    expect(snapshotDue(state({ lastDurationMs: 0, msSinceLast: 0 }), policy)).toBe(true);
  });

  it('says how long the pause after a write is', () => {
    expect(pauseAfter(100, policy)).toBe(1900);
    expect(pauseAfter(100, { everyEvents: 1, maxTimeShare: 1 })).toBe(0);
  });
});
