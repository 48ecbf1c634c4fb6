import fc from 'fast-check';
import { compareDocumentIds, compareUtf8 } from './read-store.port';

const sign = (n: number) => Math.sign(n);

describe('compareUtf8', () => {
  it('orders any two strings as their UTF-8 bytes compare', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        expect(sign(compareUtf8(a, b))).toBe(sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
      { numRuns: 2000 },
    );
  });

  it('puts a code point above FFFF after U+E000 to U+FFFF, where UTF-16 units put it before', () => {
    expect(compareUtf8('\u{1F600}', '\uFF21')).toBeGreaterThan(0);
    expect(compareUtf8('\uFF21', '\u{1F600}')).toBeLessThan(0);
    expect(compareUtf8('\u{1F600}', '\u{1F601}')).toBeLessThan(0);
    expect(compareUtf8('a', 'ab')).toBeLessThan(0);
    expect(compareUtf8('same', 'same')).toBe(0);
  });
});

describe('compareDocumentIds', () => {
  it('orders numbers by value and strings by UTF-8', () => {
    expect([10, 2, -1].sort(compareDocumentIds)).toEqual([-1, 2, 10]);
    expect(['\u{1F600}', '\uFF21', 'z'].sort(compareDocumentIds)).toEqual(['z', '\uFF21', '\u{1F600}']);
  });
});
