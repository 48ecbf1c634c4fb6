import { position } from '@chronicle/event-store';
import { MemoryReadStore } from '../memory/memory-read-store';
import { DocumentChange } from '../read-store.port';
import { compareReadModels, readDocument, recheck } from './compare-read-models';

const customer = (id: number, name: string, at = 1): DocumentChange => ({
  collection: 'customers',
  id,
  position: position(at),
  set: { id, name },
});
const user = (id: string, name: string, at = 1): DocumentChange => ({
  collection: 'users',
  id,
  position: position(at),
  set: { name },
});

async function store(...changes: DocumentChange[]): Promise<MemoryReadStore> {
  const filled = new MemoryReadStore();
  await filled.applyBatch(changes, { projection: 'main', position: position(1) });
  return filled;
}

describe('compareReadModels', () => {
  it('finds no difference between equal models, counting each document once', async () => {
    const changes = [customer(1, 'A'), customer(2, 'B'), user('a', 'A'), user('b', 'B')];
    expect(await compareReadModels(await store(...changes), await store(...changes))).toEqual({
      documents: 4,
      differences: [],
    });
    expect(await compareReadModels(new MemoryReadStore(), new MemoryReadStore())).toEqual({
      documents: 0,
      differences: [],
    });
  });

  it('lists, in id order per collection, what either side lacks and what differs', async () => {
    const live = await store(
      customer(1, 'A'),
      customer(3, 'C'),
      customer(4, 'live only'),
      user('a', 'A'),
      user('c', 'C live'),
    );
    const rebuilt = await store(
      customer(2, 'rebuilt only'),
      customer(3, 'C'),
      user('a', 'A'),
      user('b', 'B'),
      user('c', 'C'),
      user('d', 'D'),
    );

    expect(await compareReadModels(live, rebuilt)).toEqual({
      documents: 8,
      differences: [
        { collection: 'customers', id: 1, live: { id: 1, name: 'A' }, rebuilt: null },
        { collection: 'customers', id: 2, live: null, rebuilt: { id: 2, name: 'rebuilt only' } },
        { collection: 'customers', id: 4, live: { id: 4, name: 'live only' }, rebuilt: null },
        { collection: 'users', id: 'b', live: null, rebuilt: { id: 'b', name: 'B' } },
        { collection: 'users', id: 'c', live: { id: 'c', name: 'C live' }, rebuilt: { id: 'c', name: 'C' } },
        { collection: 'users', id: 'd', live: null, rebuilt: { id: 'd', name: 'D' } },
      ],
    });
  });

  it('orders numeric ids by value, not as text', async () => {
    const live = await store(customer(9, 'nine'), customer(10, 'ten'));
    const rebuilt = await store(customer(10, 'ten'));
    expect((await compareReadModels(live, rebuilt)).differences).toEqual([
      { collection: 'customers', id: 9, live: { id: 9, name: 'nine' }, rebuilt: null },
    ]);
  });
});

describe('readDocument', () => {
  it('reads one customer by id, or null', async () => {
    const filled = await store(customer(1, 'A'), customer(2, 'B'), customer(3, 'C'));
    expect(await readDocument(filled, 'customers', 2)).toEqual({ id: 2, name: 'B' });
    expect(await readDocument(filled, 'customers', 4)).toBeNull();
  });

  it('reads one user by id, or null', async () => {
    const filled = await store(user('a', 'A'));
    expect(await readDocument(filled, 'users', 'a')).toEqual({ id: 'a', name: 'A' });
    expect(await readDocument(filled, 'users', 'b')).toBeNull();
  });
});

describe('recheck', () => {
  it('keeps only the differences that remain, with both documents as they are now', async () => {
    const live = await store(customer(1, 'A'), user('a', 'A'));
    const rebuilt = await store(customer(1, 'A'), user('a', 'old'));
    const stale = [
      { collection: 'customers' as const, id: 1, live: null, rebuilt: { id: 1, name: 'A' } },
      { collection: 'users' as const, id: 'a', live: { id: 'a', name: 'A' }, rebuilt: null },
    ];

    expect(await recheck(live, rebuilt, stale)).toEqual([
      { collection: 'users', id: 'a', live: { id: 'a', name: 'A' }, rebuilt: { id: 'a', name: 'old' } },
    ]);
    expect(await recheck(live, rebuilt, [])).toEqual([]);
  });
});
