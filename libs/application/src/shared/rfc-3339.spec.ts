import { parseRfc3339 } from './rfc-3339';

describe('parseRfc3339', () => {
  it.each([
    ['2026-11-24T03:00:00Z', '2026-11-24T03:00:00.000Z'],
    ['2028-02-29t23:59:59.5z', '2028-02-29T23:59:59.500Z'],
    // The day as written is real; its offset moves the instant into March.
    ['2026-02-28T23:30:00-01:00', '2026-03-01T00:30:00.000Z'],
    ['0050-01-01T00:00:00Z', '0050-01-01T00:00:00.000Z'],
  ])('reads %s', (text, iso) => {
    expect(parseRfc3339(text)?.toISOString()).toBe(iso);
  });

  it.each([
    '2026-02-30T00:00:00Z',
    '2025-02-29T12:00:00+01:00',
    '2026-04-31T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-11-24T25:00:00Z',
    '2026-11-24T03:00:00',
    '2026-11-24',
  ])('refuses %s', (text) => {
    expect(parseRfc3339(text)).toBeNull();
  });
});
