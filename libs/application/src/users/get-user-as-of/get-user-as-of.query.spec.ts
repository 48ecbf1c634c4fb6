import fc from 'fast-check';
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

  it('reads every RFC 3339 time of years 0000 to 9999, the first hundred years too', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('0000-01-01T00:00:00Z'),
          max: new Date('9999-12-31T23:59:59Z'),
          noInvalidDate: true,
        }),
        (date) => {
          expect(parseAsOf(date.toISOString())).toEqual({ at: date });
        },
      ),
      { examples: [[new Date('0050-03-01T00:00:00Z')], [new Date('0000-02-29T12:00:00Z')]] },
    );
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
