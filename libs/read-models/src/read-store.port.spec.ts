import fc from 'fast-check';
import { MemoryReadStore } from './memory/memory-read-store';
import {
  compareDocumentIds,
  compareUtf8,
  CustomerListQuery,
  CustomerPage,
  ReadStore,
  USER_DOCUMENT_FIELDS,
  userDocumentFields,
} from './read-store.port';

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

  // The edges of the ranges UTF-16 swaps: U+D7FF, U+E000, U+FFFF, and U+10000 (D800 DC00).
  it.each([
    ['D7FF', 'E000'],
    ['D7FF', '10000'],
    ['E000', '10000'],
    ['E000', '1F600'],
    ['FFFF', '10000'],
  ])('puts U+%s before U+%s, either way round', (low, high) => {
    const [lower, higher] = [low, high].map((hex) => String.fromCodePoint(parseInt(hex, 16)));
    expect(compareUtf8(lower, higher)).toBeLessThan(0);
    expect(compareUtf8(higher, lower)).toBeGreaterThan(0);
  });
});

describe('compareDocumentIds', () => {
  it('orders numbers by value and strings by UTF-8', () => {
    expect([10, 2, -1].sort(compareDocumentIds)).toEqual([-1, 2, 10]);
    expect(['\u{1F600}', '\uFF21', 'z'].sort(compareDocumentIds)).toEqual(['z', '\uFF21', '\u{1F600}']);
  });
});

describe('userDocumentFields', () => {
  it('keeps the declared fields that hold a value, in declaration order, then the revision', () => {
    expect(USER_DOCUMENT_FIELDS).toEqual(['name', 'age', 'createdon', 'modifiedon', 'revision']);
    const picked = userDocumentFields({
      revision: 2,
      age: 0,
      name: '',
      modifiedon: undefined,
      id: 'u-1',
      role: 'admin',
    } as never);
    expect(picked).toEqual({ name: '', age: 0, revision: 2 });
    expect(Object.keys(picked)).toEqual(['name', 'age', 'revision']);
  });
});

describe('ReadStore.listCustomersJson', () => {
  /** An adapter that lists customers as objects only (as the MongoDB one does). */
  class ListingOnly extends MemoryReadStore {
    readonly queries: CustomerListQuery[] = [];
    override listCustomers(query: CustomerListQuery): Promise<CustomerPage> {
      this.queries.push(query);
      return Promise.resolve({
        items: [
          {
            createdon: '2026-01-01T00:00:00.000Z',
            email: 'a@example.com',
            extra: 'x',
            name: 'A',
            id: 1,
          } as never,
          { id: 2, name: 'B' } as never,
        ],
        total: 7,
      });
    }
    override listCustomersJson(query: CustomerListQuery) {
      return ReadStore.prototype.listCustomersJson.call(this, query);
    }
  }

  it('sends the page of listCustomers, each document’s own fields in order, with its count and total', async () => {
    const store = new ListingOnly();
    const query = { gt: 0, offset: 1, limit: 2 };

    const page = await store.listCustomersJson(query);

    expect(store.queries).toEqual([query]);
    expect(page.json.toString('utf8')).toBe(
      '[{"id":1,"name":"A","email":"a@example.com","createdon":"2026-01-01T00:00:00.000Z"},{"id":2,"name":"B"}]',
    );
    expect(page.count).toBe(2);
    expect(page.total).toBe(7);
  });
});
