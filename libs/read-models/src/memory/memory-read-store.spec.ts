import { position } from '@chronicle/event-store';
import { DocumentChange, UserDocument } from '../read-store.port';
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

  it('rejects a batch whose checkpoint is at a negative position, naming it, and changes nothing', async () => {
    await store.applyBatch([customer(1, 1)], { projection: 'main', position: position(1) });

    await expect(
      store.applyBatch([customer(1, 2, 'Changed')], { projection: 'main', position: position(-1) }),
    ).rejects.toThrow(new RangeError('checkpoint position must be two unsigned 64-bit integers'));

    expect((await store.listCustomers({ offset: 0, limit: 10 })).items.map((c) => c.name)).toEqual([
      'Customer 1',
    ]);
    expect(await store.getCheckpoint('main')).toEqual(position(1));
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

const user = (id: string, at: number, set: Partial<UserDocument> = {}): DocumentChange => ({
  collection: 'users',
  id,
  position: position(at),
  set: { name: `User ${id}`, ...set },
});

async function all<T>(documents: AsyncIterable<T>): Promise<T[]> {
  const found: T[] = [];
  for await (const doc of documents) found.push(doc);
  return found;
}

describe('MemoryReadStore documents', () => {
  let store: MemoryReadStore;

  beforeEach(() => {
    store = new MemoryReadStore();
  });

  it('yields the customers by id and the users by id as UTF-8, leaving out fields never set', async () => {
    await store.applyBatch(
      [customer(3, 1), customer(1, 2), user('b', 3), user('\u{1F600}', 4), user('\uFF21', 5), user('a', 6)],
      { projection: 'main', position: position(6) },
    );

    expect((await all(store.documents('customers'))).map((c) => c.id)).toEqual([1, 3]);
    expect(await all(store.documents('users'))).toEqual([
      { id: 'a', name: 'User a' },
      { id: 'b', name: 'User b' },
      { id: '\uFF21', name: 'User \uFF21' },
      { id: '\u{1F600}', name: 'User \u{1F600}' },
    ]);
  });

  it('goes on after a customer inserted before the one it is at, without yielding any twice', async () => {
    await store.applyBatch([customer(2, 1), customer(4, 2)], { projection: 'main', position: position(2) });
    const seen: number[] = [];
    for await (const doc of store.documents('customers')) {
      seen.push(doc.id);
      if (doc.id === 2) {
        await store.applyBatch([customer(1, 3), customer(3, 4)], {
          projection: 'main',
          position: position(4),
        });
      }
    }
    expect(seen).toEqual([2, 3, 4]);
  });

  it('lets the event loop in every 10,000 documents', async () => {
    const changes: DocumentChange[] = [];
    for (let id = 1; id <= 20_001; id++) changes.push(customer(id, id));
    for (let id = 1; id <= 10_001; id++) changes.push(user(`u${id}`, id));
    await store.applyBatch(changes, { projection: 'main', position: position(20_001) });

    for (const collection of ['customers', 'users'] as const) {
      let turns = 0;
      let counted = 0;
      let ticking = true;
      const tick = () => {
        if (!ticking) return;
        turns++;
        setImmediate(tick);
      };
      setImmediate(tick);
      const at: number[] = [];
      for await (const _ of store.documents(collection)) {
        counted++;
        at.push(turns);
      }
      ticking = false;
      expect(counted).toBe(collection === 'customers' ? 20_001 : 10_001);
      // Nothing between the documents until the 10,000th; the event loop had turns after it.
      expect(at[9_999]).toBe(0);
      expect(at[10_000]).toBeGreaterThan(0);
      if (collection === 'customers') {
        expect(at[19_999]).toBe(at[10_000]);
        expect(at[20_000]).toBeGreaterThan(at[19_999]);
      }
    }
  });

  it('stops with an error when the store closes meanwhile', async () => {
    await store.applyBatch([customer(1, 1), customer(2, 2), user('a', 3), user('b', 4)], {
      projection: 'main',
      position: position(4),
    });
    for (const collection of ['customers', 'users'] as const) {
      const reader = new MemoryReadStore();
      expect(reader.adopt(store, 'main')).toBe(true);
      store = reader;
      const documents = store.documents(collection)[Symbol.asyncIterator]();
      expect((await documents.next()).done).toBe(false);
      const closing = new MemoryReadStore();
      await store.close();
      await expect(documents.next()).rejects.toThrow('The read store is closed');
      store = closing;
      await store.applyBatch([customer(1, 1), customer(2, 2), user('a', 3), user('b', 4)], {
        projection: 'main',
        position: position(4),
      });
    }
    await expect(all(new MemoryReadStore().documents('users'))).resolves.toEqual([]);
    const closed = new MemoryReadStore();
    await closed.close();
    await expect(all(closed.documents('customers'))).rejects.toThrow('closed');
  });
});

describe('MemoryReadStore users', () => {
  let store: MemoryReadStore;

  beforeEach(() => {
    store = new MemoryReadStore();
  });

  it('applies a user change only past the position the user carries', async () => {
    await store.applyBatch([user('a', 5, { age: 1 })], { projection: 'main', position: position(5) });
    await store.applyBatch([user('a', 5, { age: 2 }), user('a', 4, { age: 3 })], {
      projection: 'main',
      position: position(6),
    });
    expect((await store.getUser('a'))?.age).toBe(1);
    await store.applyBatch([user('a', 7, { age: 4 })], { projection: 'main', position: position(7) });
    expect((await store.getUser('a'))?.age).toBe(4);
  });

  it('moves a user in the list only when its createdon changes, and refuses a listing of a closed store', async () => {
    await store.applyBatch(
      [
        user('a', 1, { createdon: '2026-01-02T00:00:00.000Z' }),
        user('b', 2, { createdon: '2026-01-03T00:00:00.000Z' }),
        user('a', 3, { age: 7 }),
      ],
      { projection: 'main', position: position(3) },
    );
    expect((await store.listUsers({ offset: 0, limit: 10 })).items.map((u) => u.id)).toEqual(['a', 'b']);
    await store.applyBatch([user('a', 4, { createdon: '2026-01-04T00:00:00.000Z' })], {
      projection: 'main',
      position: position(4),
    });
    const page = await store.listUsers({ offset: 0, limit: 10 });
    expect(page.items.map((u) => [u.id, u.age])).toEqual([
      ['b', undefined],
      ['a', 7],
    ]);
    expect(page.total).toBe(2);
    await store.close();
    await expect(store.listUsers({ offset: 0, limit: 10 })).rejects.toThrow('closed');
    await expect(store.listCustomersJson({ offset: 0, limit: 10 })).rejects.toThrow('closed');
  });
});

describe('MemoryReadStore.adopt', () => {
  let live: MemoryReadStore;
  let generation: MemoryReadStore;
  const replaced = jest.fn();
  const applied = jest.fn();

  beforeEach(async () => {
    replaced.mockClear();
    applied.mockClear();
    live = new MemoryReadStore();
    generation = new MemoryReadStore();
    await live.applyBatch([customer(1, 1, 'old'), user('old', 2)], {
      projection: 'main',
      position: position(2),
    });
    await generation.applyBatch([customer(2, 3, 'new'), user('new', 4)], {
      projection: 'main',
      position: position(4),
    });
    live.observe({ applied, replaced });
  });

  const customerNames = async (store: MemoryReadStore) =>
    (await store.listCustomers({ offset: 0, limit: 10 })).items.map((c) => c.name);
  const userIds = async (store: MemoryReadStore) =>
    (await store.listUsers({ offset: 0, limit: 10 })).items.map((u) => u.id);

  it('takes over every collection and the checkpoint, and closes the generation', async () => {
    const before = live.generation;
    expect(live.adopt(generation, 'main')).toBe(true);

    expect(await customerNames(live)).toEqual(['new']);
    expect(await userIds(live)).toEqual(['new']);
    expect(await live.getCheckpoint('main')).toEqual(position(4));
    expect(live.generation).toBe(before + 1);
    expect(replaced).toHaveBeenCalledTimes(1);
    await expect(generation.ping()).rejects.toThrow('closed');
    expect(generation.generation).toBe(1);
    // The generation let go of what the live store took over.
    expect(generation).toMatchObject({ users: new Map() });
    await live.applyBatch([customer(3, 5, 'later')], { projection: 'main', position: position(5) });
    expect(await customerNames(live)).toEqual(['new', 'later']);
    expect(applied).toHaveBeenCalledWith({ projection: 'main', position: position(5) }, false);
  });

  it('takes over a generation at the very position the live models are at', async () => {
    await live.applyBatch([], { projection: 'main', position: position(4) });
    expect(live.adopt(generation, 'main')).toBe(true);
    expect(await customerNames(live)).toEqual(['new']);
  });

  it('refuses a generation behind the live models, or with no checkpoint when they have one, changing nothing', async () => {
    await live.applyBatch([], { projection: 'main', position: { commit: 4n, prepare: 5n } });
    expect(live.adopt(generation, 'main')).toBe(false);
    expect(live.adopt(new MemoryReadStore(), 'main')).toBe(false);

    expect(await customerNames(live)).toEqual(['old']);
    expect(await userIds(live)).toEqual(['old']);
    expect(live.generation).toBe(0);
    expect(replaced).not.toHaveBeenCalled();
    await expect(generation.ping()).resolves.toBeUndefined();
  });

  it('takes over a generation without a checkpoint into a store without one, leaving none', async () => {
    const empty = new MemoryReadStore();
    expect(live.adopt(empty, 'other')).toBe(true);
    expect(await live.getCheckpoint('other')).toBeNull();
    expect(await live.getCheckpoint('main')).toEqual(position(2));
    expect(await customerNames(live)).toEqual([]);
  });

  it('takes over only the collections named, keeping the live checkpoint', async () => {
    expect(live.adopt(generation, 'main', ['customers'])).toBe(true);
    expect(await customerNames(live)).toEqual(['new']);
    expect(await userIds(live)).toEqual(['old']);
    expect(await live.getCheckpoint('main')).toEqual(position(2));

    const users = new MemoryReadStore();
    await users.applyBatch([user('u2', 3, { createdon: '2026-01-01T00:00:00.000Z' })], {
      projection: 'main',
      position: position(3),
    });
    expect(live.adopt(users, 'main', ['users'])).toBe(true);
    expect(await customerNames(live)).toEqual(['new']);
    expect(await userIds(live)).toEqual(['u2']);
    expect((await live.listUsers({ offset: 0, limit: 10 })).total).toBe(1);
    expect(await live.getCheckpoint('main')).toEqual(position(2));
  });

  it('refuses to adopt into or from a closed store', async () => {
    const closed = new MemoryReadStore();
    await closed.close();
    expect(() => live.adopt(closed, 'main')).toThrow('closed');
    expect(() => closed.adopt(generation, 'main')).toThrow('closed');
  });
});

describe('MemoryReadStore.holdStill and restore', () => {
  it('lets one reader hold the store at a time, and refuses a closed store', async () => {
    const store = new MemoryReadStore();
    const order: string[] = [];
    let releaseFirst!: () => void;
    const first = store.holdStill(async () => {
      order.push('first');
      await new Promise<void>((resolve) => (releaseFirst = resolve));
      order.push('first done');
    });
    const second = store.holdStill(() => {
      order.push('second');
      return Promise.resolve();
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['first']);
    releaseFirst();
    await Promise.all([first, second]);
    expect(order).toEqual(['first', 'first done', 'second']);

    await store.close();
    await expect(store.holdStill(() => Promise.resolve())).rejects.toThrow('closed');
  });

  it('shows the reader the users in list order, with their positions and the checkpoints', async () => {
    const store = new MemoryReadStore();
    await store.applyBatch(
      [
        user('b', 2, { createdon: '2026-01-01T00:00:00.000Z' }),
        user('a', 3, { createdon: '2026-01-02T00:00:00.000Z' }),
      ],
      { projection: 'main', position: position(3) },
    );
    const image = await store.holdStill((read) => Promise.resolve({ ...read, users: [...read.users] }));
    expect(image.userCount).toBe(2);
    expect(image.users).toEqual([
      ['b', { name: 'User b', createdon: '2026-01-01T00:00:00.000Z' }, position(2)],
      ['a', { name: 'User a', createdon: '2026-01-02T00:00:00.000Z' }, position(3)],
    ]);
    expect(image.checkpoints).toEqual([['main', position(3)]]);
    expect(image.customers.rows).toBe(0);
  });

  const image = (
    users: [string, Record<string, unknown>, ReturnType<typeof position>][],
    checkpoints = [['main', position(1)]],
  ) =>
    ({
      customers: new CustomerColumns().image(),
      userCount: users.length,
      users,
      checkpoints,
    }) as never;

  it('restores users and checkpoints, and lists them as it would have built them', async () => {
    const store = new MemoryReadStore();
    expect(
      store.restore(
        image([
          ['a', { name: 'A', createdon: '2026-01-02T00:00:00.000Z' }, position(2)],
          ['b', { name: 'B', createdon: '2026-01-01T00:00:00.000Z' }, position(3)],
        ]),
        0,
      ),
    ).toBe(true);
    expect((await store.listUsers({ offset: 0, limit: 10 })).items.map((u) => u.id)).toEqual(['b', 'a']);
    expect(await store.getUser('a')).toEqual({ id: 'a', name: 'A', createdon: '2026-01-02T00:00:00.000Z' });
    expect(await store.getCheckpoint('main')).toEqual(position(1));
    // Restored positions guard their users.
    await store.applyBatch([user('a', 2, { name: 'again' })], { projection: 'main', position: position(4) });
    expect((await store.getUser('a'))?.name).toBe('A');
  });

  it.each([
    [
      'a user twice',
      image([
        ['a', {}, position(1)],
        ['a', {}, position(2)],
      ]),
      'User a appears twice',
    ],
    [
      'a user field of the wrong type',
      image([['a', { age: 'x' }, position(1)]]),
      'Field age must be a number',
    ],
    [
      'a user at a negative position',
      image([['a', {}, position(-1)]]),
      'change position must be two unsigned 64-bit integers',
    ],
    [
      'a checkpoint at a negative position',
      image([], [['main', position(-1)]]),
      'checkpoint position must be two unsigned 64-bit integers',
    ],
  ])('refuses %s, changing nothing', async (_, contents, message) => {
    const store = new MemoryReadStore();
    expect(() => store.restore(contents, 0)).toThrow(message);
    expect(await store.getCheckpoint('main')).toBeNull();
    expect((await store.listUsers({ offset: 0, limit: 10 })).total).toBe(0);
  });

  it('restores nothing into a closed store, one that has applied a batch, or after another generation', async () => {
    const closed = new MemoryReadStore();
    await closed.close();
    expect(() => closed.restore(image([]), closed.generation)).toThrow('closed');

    const store = new MemoryReadStore();
    expect(store.restore(image([['a', {}, position(1)]]), 1)).toBe(false);
    expect(await store.getUser('a')).toBeNull();
    await store.applyBatch([], { projection: 'other', position: position(1) });
    expect(store.restore(image([['a', {}, position(1)]]), 0)).toBe(false);
    expect(await store.getUser('a')).toBeNull();
  });

  it('answers false to a restore it would not do before reading the image, even a malformed one', async () => {
    const twice = () =>
      image([
        ['a', {}, position(1)],
        ['a', {}, position(2)],
      ]);
    const store = new MemoryReadStore();
    expect(store.restore(twice(), 1)).toBe(false);
    await store.applyBatch([], { projection: 'other', position: position(1) });
    expect(store.restore(twice(), 0)).toBe(false);
    expect(await store.getUser('a')).toBeNull();
  });

  it.each([
    [
      'a batch is applied',
      (store: MemoryReadStore) => store.applyBatch([], { projection: 'main', position: position(5) }),
    ],
    ['a rebuild is adopted', (store: MemoryReadStore) => store.adopt(new MemoryReadStore(), 'main')],
  ])('restores nothing when %s while it reads the image', (_, meanwhile) => {
    const store = new MemoryReadStore();
    const users = (function* () {
      void meanwhile(store);
      yield ['a', {}, position(1)] as const;
    })();
    expect(
      store.restore(
        { customers: new CustomerColumns().image(), userCount: 1, users, checkpoints: [] } as never,
        0,
      ),
    ).toBe(false);
    expect(store.restore(image([['b', {}, position(1)]]), 0)).toBe(false);
    return expect(store.getUser('a')).resolves.toBeNull();
  });

  it('counts every wholesale replacement: adopt and close', async () => {
    const store = new MemoryReadStore();
    expect(store.generation).toBe(0);
    expect(store.adopt(new MemoryReadStore(), 'main')).toBe(true);
    expect(store.generation).toBe(1);
    await store.close();
    expect(store.generation).toBe(2);
  });
});
