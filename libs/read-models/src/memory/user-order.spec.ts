import fc from 'fast-check';
import { UserOrder } from './user-order';

type Op = { kind: 'insert'; id: string; createdon: string | undefined } | { kind: 'remove'; pick: number };

const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

describe('UserOrder', () => {
  it('pages exactly as a sort of every user by createdon, then id, by UTF-8 bytes', () => {
    const op = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          kind: fc.constant('insert' as const),
          id: fc.string({ unit: 'binary', maxLength: 4 }),
          // Few distinct dates, so that many users share one and land by id.
          createdon: fc.option(
            fc.constantFrom('2026-01-01', '2026-01-02', '2026-01-03', '\u{1F600}', '\uFF21'),
            {
              nil: undefined,
            },
          ),
        }),
      },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }) },
    );
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 3000 }),
        fc.nat(3000),
        fc.integer({ min: 0, max: 50 }),
        (ops, offset, limit) => {
          const order = new UserOrder();
          const users = new Map<string, string | undefined>();
          for (const step of ops as Op[]) {
            if (step.kind === 'insert') {
              if (users.has(step.id)) continue;
              users.set(step.id, step.createdon);
              order.insert(step.id, step.createdon);
            } else if (users.size > 0) {
              const id = [...users.keys()][step.pick % users.size];
              order.remove(id, users.get(id));
              users.delete(id);
            }
          }
          const sorted = [...users.entries()]
            .sort(([idA, a], [idB, b]) => byBytes(a ?? '', b ?? '') || byBytes(idA, idB))
            .map(([id]) => id);
          expect(order.size).toBe(users.size);
          expect(order.slice(0, users.size)).toEqual(sorted);
          expect(order.slice(offset, limit)).toEqual(sorted.slice(offset, offset + limit));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('splits chunks as they fill, keeping every entry in order', () => {
    const order = new UserOrder();
    // One createdon for all: each lands by id, all over the order.
    const ids = Array.from({ length: 5000 }, (_, i) => `u-${(i * 7919) % 5000}`);
    for (const id of ids) order.insert(id, '2026-01-01T00:00:00.000Z');
    const expected = [...ids].sort(byBytes);
    expect(order.slice(0, 5000)).toEqual(expected);
    expect(order.slice(4990, 100)).toEqual(expected.slice(4990));
  });

  it('drops a chunk it empties, and finds the last entry of a chunk in that chunk', () => {
    const order = new UserOrder();
    // In order: 3,000 entries fill chunks of 1,024 and split them, so the first chunk ends at u-0511.
    const ids = Array.from({ length: 3000 }, (_, i) => `u-${String(i).padStart(4, '0')}`);
    for (const id of ids) order.insert(id, '2026-01-01');
    // The whole first chunk, its last entry first.
    const first = ids.slice(0, 512).reverse();
    for (const id of first) order.remove(id, '2026-01-01');
    order.insert('a-first', '2026-01-01');
    order.insert('z-last', '2026-01-01');

    expect(order.size).toBe(3000 - 512 + 2);
    expect(order.slice(0, 5000)).toEqual(['a-first', ...ids.slice(512), 'z-last']);
  });

  it('refuses to remove a user where its createdon does not put it', () => {
    const order = new UserOrder();
    order.insert('u-1', '2026-01-01');
    expect(() => order.remove('u-1', '2026-01-02')).toThrow('not in the order');
    expect(() => new UserOrder().remove('u-1', undefined)).toThrow('not in the order');
  });
});
