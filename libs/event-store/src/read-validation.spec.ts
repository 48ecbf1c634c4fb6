import { validateLogQuery, validateReadAll, validFromRevision } from './read-validation';

describe('read validation', () => {
  it('starts a stream read at revision 0, or at the whole non-negative revision given', () => {
    expect(validFromRevision(undefined)).toBe(0);
    expect(validFromRevision(0)).toBe(0);
    expect(validFromRevision(7)).toBe(7);
    for (const fromRevision of [-1, 1.5, Number.NaN, 2 ** 53]) {
      expect(() => validFromRevision(fromRevision)).toThrow(
        new RangeError(`fromRevision must be a non-negative integer, got ${fromRevision}`),
      );
    }
  });

  it('takes a log read with no limit, or a whole limit of 0 or more, and one kind of type filter', () => {
    for (const options of [{}, { limit: 0 }, { limit: 10 }, { eventTypes: ['A.v1'] }, { exceptTypes: [] }]) {
      expect(() => validateReadAll(options)).not.toThrow();
    }
    for (const limit of [-1, 1.5, Number.NaN, 2 ** 53]) {
      expect(() => validateReadAll({ limit })).toThrow(
        new RangeError(`limit must be a non-negative integer, got ${limit}`),
      );
    }
    expect(() => validateReadAll({ eventTypes: [], exceptTypes: [] })).toThrow(
      new RangeError('eventTypes and exceptTypes exclude each other'),
    );
  });

  it('takes a page of the log of 1 or more', () => {
    expect(() => validateLogQuery({ limit: 1 })).not.toThrow();
    for (const limit of [0, -1, 1.5, Number.NaN, 2 ** 53]) {
      expect(() => validateLogQuery({ limit })).toThrow(
        new RangeError(`limit must be a positive integer, got ${limit}`),
      );
    }
  });
});
