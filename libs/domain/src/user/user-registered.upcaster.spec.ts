import { userRegisteredV1ToV2 } from './user-registered.upcaster';

const v1 = (createdon: unknown) => ({ userId: 'u-1', accountId: null, name: 'Ada', age: 36, createdon });

describe('UserRegistered.v1 → v2', () => {
  it('names the versions it maps', () => {
    expect(userRegisteredV1ToV2).toMatchObject({ from: 'UserRegistered.v1', to: 'UserRegistered.v2' });
  });

  it.each([
    ['2026-03-01T10:00:00Z', '2026-03-01T10:00:00.000Z'],
    ['2026-03-01T11:00:00+01:00', '2026-03-01T10:00:00.000Z'],
    ['2026-03-01T10:00:00.5Z', '2026-03-01T10:00:00.500Z'],
    ['2026-03-01T10:00:00.000Z', '2026-03-01T10:00:00.000Z'],
  ])('normalises createdon %s to %s, keeping every other field', (stored, normalised) => {
    expect(userRegisteredV1ToV2.upcast(v1(stored))).toEqual(v1(normalised));
  });

  it('keeps a createdon no parser understands, rather than inventing one', () => {
    expect(userRegisteredV1ToV2.upcast(v1('last tuesday'))).toEqual(v1('last tuesday'));
    expect(userRegisteredV1ToV2.upcast(v1(42))).toEqual(v1(42));
  });

  it('does not change the stored data it is given', () => {
    const stored = v1('2026-03-01T10:00:00Z');
    userRegisteredV1ToV2.upcast(stored);
    expect(stored.createdon).toBe('2026-03-01T10:00:00Z');
  });
});
