import fc from 'fast-check';
import {
  comparePositions,
  formatPosition,
  parsePosition,
  position,
  positionKey,
  positionProblem,
  POSITION_LIMIT,
  POSITION_PATTERN,
} from './position';

const u63 = fc.bigInt({ min: 0n, max: POSITION_LIMIT - 1n });
const recordPosition = fc.tuple(u63, u63).map(([a, b]) => (a >= b ? position(a, b) : position(b, a)));

describe('positions', () => {
  it('orders by commit first, then by prepare', () => {
    expect(comparePositions(position(2, 1), position(3, 0))).toBe(-1);
    expect(comparePositions(position(3, 0), position(2, 1))).toBe(1);
    expect(comparePositions(position(5, 1), position(5, 2))).toBe(-1);
    expect(comparePositions(position(5, 2), position(5, 1))).toBe(1);
    expect(comparePositions(position(5, 2), position(5, 2))).toBe(0);
  });

  it('formats one number when commit and prepare agree, and both when they differ', () => {
    expect(formatPosition(position(42))).toBe('42');
    expect(formatPosition(position(42, 40))).toBe('42:40');
  });

  it('parses what it formats, for every position a record can have', () => {
    fc.assert(
      fc.property(recordPosition, (p) => {
        expect(parsePosition(formatPosition(p))).toEqual(p);
      }),
    );
  });

  it.each(['', '-1', '1:', ':1', 'x', '1:x', ' 1', '1 ', '1:2:3', '123456789012345678901', '0x10', '1e3'])(
    'refuses the malformed position %p',
    (text) => {
      expect(parsePosition(text)).toBeNull();
    },
  );

  it('refuses positions that name no record: at or above 2^63, or commit before prepare', () => {
    expect(parsePosition(String(POSITION_LIMIT))).toBeNull();
    expect(parsePosition(`${POSITION_LIMIT - 1n}`)).toEqual(position(POSITION_LIMIT - 1n));
    expect(parsePosition('3:4')).toBeNull();
    expect(parsePosition('4:3')).toEqual(position(4, 3));
    expect(parsePosition('18446744073709551615:18446744073709551615')).toBeNull();
  });

  it('names what is wrong with a position', () => {
    expect(positionProblem(position(-1n, -1n))).toBe('negative');
    expect(positionProblem(position(1n, -1n))).toBe('negative');
    // Each half on its own, whatever the other: not "commit before prepare".
    expect(positionProblem(position(-1n, 0n))).toBe('negative');
    expect(positionProblem(position(5n, POSITION_LIMIT))).toBe('at or above 2^63');
    expect(positionProblem(position(POSITION_LIMIT, 0n))).toBe('at or above 2^63');
    expect(positionProblem(position(POSITION_LIMIT, POSITION_LIMIT))).toBe('at or above 2^63');
    expect(positionProblem(position(1, 2))).toBe('commit before prepare');
    expect(positionProblem(position(2, 1))).toBeNull();
  });

  it('keys sort as strings exactly as the positions compare, with both parts at 20 digits', () => {
    expect(positionKey(position(42, 40))).toBe('00000000000000000042:00000000000000000040');
    fc.assert(
      fc.property(recordPosition, recordPosition, (a, b) => {
        const keys = positionKey(a) < positionKey(b) ? -1 : positionKey(a) > positionKey(b) ? 1 : 0;
        expect(keys).toBe(comparePositions(a, b));
      }),
    );
  });
});

describe('POSITION_PATTERN', () => {
  const pattern = new RegExp(`^(?:${POSITION_PATTERN})$`, 'u');
  /** Digits near the bound, with and without leading zeros, up to and past 20 of them. */
  const number = fc.oneof(
    fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String),
    fc.bigInt({ min: POSITION_LIMIT - 1000n, max: POSITION_LIMIT + 1000n }).map(String),
    fc
      .tuple(fc.integer({ min: 0, max: 3 }), fc.bigInt({ min: 0n, max: POSITION_LIMIT + 10n }))
      .map(([zeros, n]) => `${'0'.repeat(zeros)}${n}`),
  );
  const text = fc.oneof(
    number,
    fc.tuple(number, number).map(([a, b]) => `${a}:${b}`),
    fc.string({ maxLength: 25 }),
  );

  it('matches exactly what parsePosition reads, less the prepare-after-commit rule no pattern can state', () => {
    fc.assert(
      fc.property(text, (given) => {
        const numbers = /^(\d{1,20})(?::(\d{1,20}))?$/.exec(given);
        const readable =
          numbers !== null &&
          BigInt(numbers[1]) < POSITION_LIMIT &&
          BigInt(numbers[2] ?? numbers[1]) < POSITION_LIMIT;
        expect(pattern.test(given)).toBe(readable);
        if (parsePosition(given) !== null) expect(pattern.test(given)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
