import { parsePosition } from '@chronicle/event-store';
import { parseAsOf } from './get-user-as-of.query';

describe('parseAsOf', () => {
  it.each([
    ['2026-11-24T03:00:00Z', '2026-11-24T03:00:00.000Z'],
    ['2026-11-24T03:00:00.123Z', '2026-11-24T03:00:00.123Z'],
    ['2026-11-24T04:00:00+01:00', '2026-11-24T03:00:00.000Z'],
  ])('reads the RFC 3339 time %s', (text, iso) => {
    expect(parseAsOf(text)).toEqual({ at: new Date(iso) });
  });

  it.each(['42', '42:40', '0'])('reads the position %s', (text) => {
    expect(parseAsOf(text)).toEqual({ position: parsePosition(text) });
  });

  it.each([
    '',
    'yesterday',
    '2026-11-24',
    '2026-11-24T03:00:00',
    '2026-02-30T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-11-24T25:00:00Z',
    '-1',
    '42:43',
    '9223372036854775808',
  ])('refuses %j', (text) => {
    expect(parseAsOf(text)).toBeNull();
  });
});
