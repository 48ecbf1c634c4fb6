import { position } from '@chronicle/event-store';
import { DocumentChange } from '../read-store.port';
import { CustomerColumns } from './customer-columns';
import { MemoryReadStore } from './memory-read-store';

const customer = (id: number, at: number, name = `Customer ${id}`): DocumentChange => ({
  collection: 'customers',
  id,
  position: position(at),
  set: { id, name, email: `c${id}@example.com`, createdon: '2026-01-01T00:00:00.000Z' },
});

describe('MemoryReadStore', () => {
  let store: MemoryReadStore;

  beforeEach(() => {
    store = new MemoryReadStore();
  });

  describe('a batch with an invalid change is rejected and changes nothing', () => {
    const invalid: [string, unknown][] = [
      [
        'a customer id that is not an integer',
        { collection: 'customers', id: 1.5, position: position(2), set: {} },
      ],
      [
        'a field of the wrong type',
        { collection: 'users', id: 'u', position: position(2), set: { age: '3' } },
      ],
      [
        'a field the document does not have',
        { collection: 'users', id: 'u', position: position(2), set: { role: 'x' } },
      ],
      [
        'a set id that differs from the key',
        { collection: 'customers', id: 2, position: position(2), set: { id: 3 } },
      ],
      ['a negative position', { collection: 'customers', id: 2, position: position(-1), set: {} }],
      ['an unknown collection', { collection: 'accounts', id: 'a', position: position(2), set: {} }],
    ];

    it.each(invalid)('%s', async (_, change) => {
      await store.applyBatch([customer(1, 1)], { projection: 'main', position: position(1) });

      await expect(
        store.applyBatch([customer(1, 2, 'Changed'), change as DocumentChange], {
          projection: 'main',
          position: position(2),
        }),
      ).rejects.toThrow();

      expect((await store.listCustomers({ offset: 0, limit: 10 })).items.map((c) => c.name)).toEqual([
        'Customer 1',
      ]);
      expect(await store.getCheckpoint('main')).toEqual(position(1));
    });
  });

  it.each([
    ['a negative offset', { offset: -1, limit: 10 }],
    ['a fractional limit', { offset: 0, limit: 1.5 }],
    ['a gt that is not a number', { gt: NaN, offset: 0, limit: 10 }],
  ])('rejects a list query with %s', async (_, query) => {
    await expect(store.listCustomers(query)).rejects.toThrow(RangeError);
  });

  it('keeps the stored checkpoint apart from the caller’s object', async () => {
    const at = { commit: 7n, prepare: 7n };
    await store.applyBatch([], { projection: 'main', position: at });
    (at as { commit: bigint }).commit = 99n;

    expect(await store.getCheckpoint('main')).toEqual(position(7));
  });

  it('refuses every call once closed, and lets the data go', async () => {
    await store.applyBatch([customer(1, 1)], { projection: 'main', position: position(1) });
    await store.close();

    await expect(store.ping()).rejects.toThrow('closed');
    await expect(store.listCustomers({ offset: 0, limit: 10 })).rejects.toThrow('closed');
    await expect(store.getUser('u')).rejects.toThrow('closed');
    await expect(store.getCheckpoint('main')).rejects.toThrow('closed');
    await expect(store.applyBatch([], { projection: 'main', position: position(2) })).rejects.toThrow(
      'closed',
    );
  });

  it('reads only the documents of the page asked for, however deep the page', async () => {
    const changes: DocumentChange[] = [];
    for (let id = 1; id <= 100_000; id++) changes.push(customer(id, id));
    await store.applyBatch(changes, { projection: 'main', position: position(100_000) });
    const read = jest.spyOn(CustomerColumns.prototype, 'read');

    const page = await store.listCustomers({ gt: 10, lt: 99_990, offset: 99_900, limit: 100 });

    expect(page.total).toBe(99_979);
    expect(page.items.map((c) => c.id)).toEqual(Array.from({ length: 79 }, (_, i) => 99_911 + i));
    expect(read).toHaveBeenCalledTimes(79);
    read.mockRestore();
  });
});
