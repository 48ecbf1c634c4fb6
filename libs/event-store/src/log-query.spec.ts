import type { RecordedEvent } from './event-store.port';
import { matchesLogQuery } from './log-query';
import { newEvent } from './new-event.spec-helper';
import { position } from './position';

const recorded: RecordedEvent = {
  ...newEvent('Tested.v1', {}, 'e-1'),
  metadata: {
    actor: 'user-1',
    correlationId: 'corr-1',
    causationId: null,
    occurredAt: '2026-01-01T00:00:00.000Z',
  },
  stream: 'tested-1',
  revision: 0,
  position: position(1),
  recordedAt: '2026-03-01T12:00:00.000Z',
  hash: 'a'.repeat(64),
};

describe('matchesLogQuery', () => {
  it('matches every event when there is no condition', () => {
    expect(matchesLogQuery(recorded, {})).toBe(true);
  });

  it.each([
    [{ eventTypes: ['Other.v1', 'Tested.v1'] }, true],
    [{ eventTypes: ['Other.v1'] }, false],
    [{ eventTypes: [] }, false],
    [{ actor: 'user-1' }, true],
    [{ actor: 'user-2' }, false],
    [{ correlationId: 'corr-1' }, true],
    [{ correlationId: 'corr-2' }, false],
    // since is inclusive, until exclusive.
    [{ since: '2026-03-01T12:00:00.000Z' }, true],
    [{ since: '2026-03-01T12:00:00.001Z' }, false],
    [{ until: '2026-03-01T12:00:00.001Z' }, true],
    [{ until: '2026-03-01T12:00:00.000Z' }, false],
  ])('%p: %p', (query, matches) => {
    expect(matchesLogQuery(recorded, query)).toBe(matches);
  });

  it('needs every condition to hold', () => {
    const all = {
      eventTypes: ['Tested.v1'],
      actor: 'user-1',
      correlationId: 'corr-1',
      since: '2026-03-01T00:00:00.000Z',
      until: '2026-03-02T00:00:00.000Z',
    };
    expect(matchesLogQuery(recorded, all)).toBe(true);
    for (const [key, value] of Object.entries({
      eventTypes: ['Other.v1'],
      actor: 'user-2',
      correlationId: 'corr-2',
      since: '2026-03-02T00:00:00.000Z',
      until: '2026-03-01T00:00:00.000Z',
    })) {
      expect(matchesLogQuery(recorded, { ...all, [key]: value })).toBe(false);
    }
  });
});
