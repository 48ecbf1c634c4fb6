import { Upcaster, UpcasterRegistry } from './upcaster-registry';

const step = (from: string, to: string): Upcaster => ({ from, to, upcast: (data) => data });

describe('UpcasterRegistry checks', () => {
  it('names the type where a loop closes, counting the first type as seen', () => {
    expect(() => new UpcasterRegistry([step('A.v1', 'A.v2'), step('A.v2', 'A.v1')])).toThrow(
      new Error('Upcasters loop through A.v1'),
    );
    expect(
      () => new UpcasterRegistry([step('B.v1', 'B.v2'), step('B.v2', 'B.v3'), step('B.v3', 'B.v2')]),
    ).toThrow(new Error('Upcasters loop through B.v2'));
  });

  it('names the type of a duplicate and of a self-mapping', () => {
    expect(() => new UpcasterRegistry([step('C.v1', 'C.v2'), step('C.v1', 'C.v3')])).toThrow(
      new Error('Two upcasters read C.v1'),
    );
    expect(() => new UpcasterRegistry([step('D.v1', 'D.v1')])).toThrow(
      new Error('Upcaster D.v1 maps a type to itself'),
    );
  });

  it('accepts chains that merge into one type', () => {
    const registry = new UpcasterRegistry([step('E.v1', 'E.v3'), step('E.v2', 'E.v3')]);
    expect(registry.storedTypesOf(['E.v3']).sort()).toEqual(['E.v1', 'E.v2', 'E.v3']);
  });
});
