import { timeOrderedId } from './time-ordered-id';

describe('timeOrderedId', () => {
  it('is a UUID of version 7 and variant 10 whose first 48 bits are the time in milliseconds', () => {
    const now = Date.parse('2026-11-24T06:40:00.123Z');
    const id = timeOrderedId(now);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(now);
  });

  it('sorts by time, and differs within one millisecond', () => {
    const ids = [1, 2, 3, 1_000, 2 ** 40].map((ms) => timeOrderedId(Date.UTC(2026, 0, 1) + ms));
    expect([...ids].sort()).toEqual(ids);
    const same = new Set(Array.from({ length: 1000 }, () => timeOrderedId(0)));
    expect(same.size).toBe(1000);
  });
});
