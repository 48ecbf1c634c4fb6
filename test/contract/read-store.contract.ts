import { position, Position } from '@chronicle/event-store';
import { CustomerDocument, DocumentChange, ReadStore, UserDocument } from '@chronicle/read-models';

/**
 * The ReadStore port's behaviour, run against every adapter (memory; MongoDB against its
 * wire-protocol double and, with MONGODB_URI, a real server). Only the port is exercised here.
 */
export function describeReadStoreContract(
  adapterName: string,
  setup: () => Promise<{ store: ReadStore; cleanup(): Promise<void> }>,
): void {
  describe(`ReadStore contract: ${adapterName}`, () => {
    let store: ReadStore;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await setup());
    });

    afterEach(async () => {
      await cleanup();
    });

    const checkpoint = (at: Position | number, projection = 'main') => ({
      projection,
      position: typeof at === 'number' ? position(at) : at,
    });

    const customer = (id: number, at: Position | number, set: Partial<CustomerDocument>): DocumentChange => ({
      collection: 'customers',
      id,
      position: typeof at === 'number' ? position(at) : at,
      set,
    });

    const user = (id: string, at: Position | number, set: Partial<UserDocument>): DocumentChange => ({
      collection: 'users',
      id,
      position: typeof at === 'number' ? position(at) : at,
      set,
    });

    const fullCustomer = (id: number): CustomerDocument => ({
      id,
      name: `Customer ${id}`,
      email: `customer${id}@example.com`,
      createdon: `2026-01-01T00:00:${String(id % 60).padStart(2, '0')}.000Z`,
    });

    const ada: UserDocument = {
      id: 'u-ada',
      name: 'Ada',
      age: 36,
      createdon: '2026-11-22T09:15:00.000Z',
      modifiedon: '2026-11-22T09:15:00.000Z',
      revision: 0,
    };

    /** Stores customers with the given ids, one change and position each, in the order given. */
    async function seedCustomers(ids: number[]): Promise<void> {
      const changes = ids.map((id, i) => customer(id, i + 1, fullCustomer(id)));
      await store.applyBatch(changes, checkpoint(ids.length));
    }

    const all = { offset: 0, limit: 1000 };
    const listIds = async (query: { gt?: number; lt?: number; offset: number; limit: number }) => {
      const page = await store.listCustomers(query);
      return { ids: page.items.map((item) => item.id), total: page.total };
    };

    describe('documents', () => {
      it('creates a customer that does not exist yet', async () => {
        await store.applyBatch([customer(7, 1, fullCustomer(7))], checkpoint(1));

        expect(await store.listCustomers(all)).toEqual({ items: [fullCustomer(7)], total: 1 });
      });

      it('creates a user that does not exist yet', async () => {
        await store.applyBatch([user(ada.id, 1, ada)], checkpoint(1));

        expect(await store.getUser(ada.id)).toEqual(ada);
      });

      it('updates an existing document with a change at a later position', async () => {
        await store.applyBatch([user(ada.id, 1, ada), customer(1, 2, fullCustomer(1))], checkpoint(2));
        await store.applyBatch(
          [
            user(ada.id, 3, { name: 'Ada L.', modifiedon: '2026-11-23T10:00:00.000Z' }),
            customer(1, 4, { name: 'Renamed' }),
          ],
          checkpoint(4),
        );

        expect(await store.getUser(ada.id)).toEqual({
          ...ada,
          name: 'Ada L.',
          modifiedon: '2026-11-23T10:00:00.000Z',
        });
        expect((await store.listCustomers(all)).items).toEqual([{ ...fullCustomer(1), name: 'Renamed' }]);
      });

      it('keeps the fields a partial change does not set', async () => {
        await store.applyBatch([user(ada.id, 1, ada), customer(1, 2, fullCustomer(1))], checkpoint(2));
        await store.applyBatch(
          [user(ada.id, 3, { age: 37 }), customer(1, 4, { email: 'new@example.com' })],
          checkpoint(4),
        );

        expect(await store.getUser(ada.id)).toEqual({ ...ada, age: 37 });
        expect((await store.listCustomers(all)).items).toEqual([
          { ...fullCustomer(1), email: 'new@example.com' },
        ]);
      });

      it('applies the changes of one batch in order', async () => {
        await store.applyBatch(
          [user(ada.id, 1, ada), user(ada.id, 2, { age: 40 }), user(ada.id, 3, { age: 41, name: 'Ada B.' })],
          checkpoint(3),
        );

        expect(await store.getUser(ada.id)).toEqual({ ...ada, age: 41, name: 'Ada B.' });
      });

      it('keeps text exactly, including characters outside ASCII', async () => {
        const text = {
          name: 'Zoë 山田 🚀 "quoted" \\ back',
          email: 'zoë@exämple.com',
          createdon: '2026-11-22T09:15:00.123Z',
        };
        await store.applyBatch(
          [customer(1, 1, { id: 1, ...text }), user('ü-1', 2, { ...ada, id: 'ü-1', name: text.name })],
          checkpoint(2),
        );

        expect((await store.listCustomers(all)).items).toEqual([{ id: 1, ...text }]);
        expect(await store.getUser('ü-1')).toEqual({ ...ada, id: 'ü-1', name: text.name });
      });

      it('answers null for an unknown user', async () => {
        await store.applyBatch([user(ada.id, 1, ada)], checkpoint(1));

        expect(await store.getUser('u-nobody')).toBeNull();
      });

      it('hands out snapshots: changing a returned document changes nothing stored', async () => {
        await store.applyBatch([user(ada.id, 1, ada), customer(1, 2, fullCustomer(1))], checkpoint(2));

        const read = await store.getUser(ada.id);
        read!.name = 'Mallory';
        (await store.listCustomers(all)).items[0].name = 'Mallory';

        expect(await store.getUser(ada.id)).toEqual(ada);
        expect((await store.listCustomers(all)).items).toEqual([fullCustomer(1)]);
      });
    });

    describe('removal (an erased subject)', () => {
      const removal = (collection: 'customers' | 'users', id: number | string, at: number) =>
        ({ collection, id, position: position(at), remove: true }) as DocumentChange;

      it('deletes a customer and a user: gone from reads, lists and totals', async () => {
        await seedCustomers([1, 2, 3]);
        const bob: UserDocument = { ...ada, id: 'u-bob', createdon: '2026-11-22T09:16:00.000Z' };
        await store.applyBatch([user(ada.id, 4, ada), user(bob.id, 5, bob)], checkpoint(5));
        await store.applyBatch([removal('customers', 2, 6), removal('users', ada.id, 7)], checkpoint(7));

        expect(await listIds(all)).toEqual({ ids: [1, 3], total: 2 });
        expect(await listIds({ gt: 1, offset: 0, limit: 10 })).toEqual({ ids: [3], total: 1 });
        expect(await store.getUser(ada.id)).toBeNull();
        expect(await store.listUsers(all)).toEqual({ items: [bob], total: 1 });
      });

      it('ignores a removal older than the document, and drops what its batch set before it', async () => {
        await store.applyBatch([customer(1, 5, fullCustomer(1))], checkpoint(5));
        await store.applyBatch([removal('customers', 1, 4)], checkpoint(6));
        expect(await listIds(all)).toEqual({ ids: [1], total: 1 });

        await store.applyBatch(
          [user(ada.id, 7, ada), user(ada.id, 8, { name: 'Ada L.' }), removal('users', ada.id, 9)],
          checkpoint(9),
        );
        expect(await store.getUser(ada.id)).toBeNull();
        // A replay of what preceded the removal makes no document the removal left behind.
        await store.applyBatch([removal('customers', 1, 10), removal('customers', 1, 10)], checkpoint(10));
        await store.applyBatch([removal('users', 'u-never', 11)], checkpoint(11));
        expect(await listIds(all)).toEqual({ ids: [], total: 0 });
      });
    });

    describe('position guard', () => {
      it('ignores a change at an older position than the document carries', async () => {
        await store.applyBatch([user(ada.id, 5, ada), customer(1, 6, fullCustomer(1))], checkpoint(6));
        await store.applyBatch(
          [user(ada.id, 3, { name: 'Old' }), customer(1, 4, { name: 'Old' })],
          checkpoint(7),
        );

        expect(await store.getUser(ada.id)).toEqual(ada);
        expect((await store.listCustomers(all)).items).toEqual([fullCustomer(1)]);
      });

      it('ignores a change at the position the document already carries: a replayed event', async () => {
        await store.applyBatch([user(ada.id, 5, ada), customer(1, 6, fullCustomer(1))], checkpoint(6));
        await store.applyBatch(
          [user(ada.id, 5, { age: 99 }), customer(1, 6, { name: 'Twice' })],
          checkpoint(6),
        );

        expect(await store.getUser(ada.id)).toEqual(ada);
        expect((await store.listCustomers(all)).items).toEqual([fullCustomer(1)]);
      });

      it('guards within one batch too', async () => {
        await store.applyBatch(
          [
            user(ada.id, 5, ada),
            user(ada.id, 4, { name: 'Older' }),
            user(ada.id, 5, { name: 'Same' }),
            customer(1, 6, fullCustomer(1)),
            customer(1, 2, { email: 'older@example.com' }),
            customer(1, 6, { email: 'same@example.com' }),
          ],
          checkpoint(6),
        );

        expect(await store.getUser(ada.id)).toEqual(ada);
        expect((await store.listCustomers(all)).items).toEqual([fullCustomer(1)]);
      });

      it('guards each document by its own position', async () => {
        await store.applyBatch(
          [user('u-1', 10, { ...ada, id: 'u-1' }), customer(1, 11, fullCustomer(1))],
          checkpoint(11),
        );
        await store.applyBatch(
          [user('u-2', 3, { ...ada, id: 'u-2' }), customer(2, 4, fullCustomer(2))],
          checkpoint(12),
        );

        expect(await store.getUser('u-2')).toEqual({ ...ada, id: 'u-2' });
        expect((await store.listCustomers(all)).items).toEqual([fullCustomer(1), fullCustomer(2)]);
      });

      it('orders positions by commit, then prepare', async () => {
        await store.applyBatch([user(ada.id, position(10, 8), ada)], checkpoint(position(10, 8)));
        await store.applyBatch([user(ada.id, position(10, 7), { age: 1 })], checkpoint(position(10, 8)));
        await store.applyBatch([user(ada.id, position(9, 9), { age: 2 })], checkpoint(position(10, 8)));
        expect(await store.getUser(ada.id)).toEqual(ada);

        await store.applyBatch([user(ada.id, position(10, 9), { age: 3 })], checkpoint(position(10, 9)));
        expect((await store.getUser(ada.id))?.age).toBe(3);
        await store.applyBatch([user(ada.id, position(11, 0), { age: 4 })], checkpoint(position(11, 0)));
        expect((await store.getUser(ada.id))?.age).toBe(4);
      });

      it('compares positions beyond 2^53 exactly', async () => {
        const big = 2n ** 60n;
        await store.applyBatch(
          [customer(1, position(big + 2n), fullCustomer(1))],
          checkpoint(position(big + 2n)),
        );
        await store.applyBatch(
          [customer(1, position(big + 1n), { name: 'Older' })],
          checkpoint(position(big + 2n)),
        );
        expect((await store.listCustomers(all)).items[0].name).toBe('Customer 1');

        await store.applyBatch(
          [customer(1, position(big + 3n), { name: 'Newer' })],
          checkpoint(position(big + 3n)),
        );
        expect((await store.listCustomers(all)).items[0].name).toBe('Newer');
      });
    });

    describe('checkpoints', () => {
      it('has no checkpoint before the first batch', async () => {
        expect(await store.getCheckpoint('main')).toBeNull();
      });

      it('stores the checkpoint of a batch and reads it back', async () => {
        await store.applyBatch([user(ada.id, 3, ada)], checkpoint(position(12, 3)));

        expect(await store.getCheckpoint('main')).toEqual(position(12, 3));
      });

      it('stores the checkpoint of a batch without changes', async () => {
        await store.applyBatch([], checkpoint(42));

        expect(await store.getCheckpoint('main')).toEqual(position(42));
      });

      it('replaces the checkpoint with the next batch', async () => {
        await store.applyBatch([], checkpoint(1));
        await store.applyBatch([], checkpoint(2));

        expect(await store.getCheckpoint('main')).toEqual(position(2));
      });

      it('keeps one checkpoint per projection name', async () => {
        await store.applyBatch([], checkpoint(5, 'main'));
        await store.applyBatch([], checkpoint(9, 'other'));

        expect(await store.getCheckpoint('main')).toEqual(position(5));
        expect(await store.getCheckpoint('other')).toEqual(position(9));
        expect(await store.getCheckpoint('unknown')).toBeNull();
      });

      it('keeps positions beyond 2^53 exactly', async () => {
        const at = position(2n ** 63n + 5n, 2n ** 63n + 1n);
        await store.applyBatch([], checkpoint(at));

        expect(await store.getCheckpoint('main')).toEqual(at);
      });
    });

    describe('listCustomers', () => {
      const ids = [1, 2, 3, 5, 8, 13, 21, 34, 55, 89];

      beforeEach(async () => {
        await seedCustomers(ids);
      });

      it('lists every customer sorted by id with the full documents', async () => {
        expect(await store.listCustomers(all)).toEqual({ items: ids.map(fullCustomer), total: ids.length });
      });

      it('treats gt and lt as exclusive bounds', async () => {
        expect(await listIds({ gt: 5, lt: 34, ...all })).toEqual({ ids: [8, 13, 21], total: 3 });
        expect(await listIds({ gt: 4, lt: 35, ...all })).toEqual({ ids: [5, 8, 13, 21, 34], total: 5 });
      });

      it('applies gt alone and lt alone', async () => {
        expect(await listIds({ gt: 34, ...all })).toEqual({ ids: [55, 89], total: 2 });
        expect(await listIds({ lt: 3, ...all })).toEqual({ ids: [1, 2], total: 2 });
        expect(await listIds({ gt: 0, ...all })).toEqual({ ids, total: ids.length });
        expect(await listIds({ lt: 90, ...all })).toEqual({ ids, total: ids.length });
      });

      it('gives an empty page and total 0 when gt >= lt', async () => {
        expect(await listIds({ gt: 13, lt: 13, ...all })).toEqual({ ids: [], total: 0 });
        expect(await listIds({ gt: 21, lt: 5, ...all })).toEqual({ ids: [], total: 0 });
        expect(await listIds({ gt: 13, lt: 14, ...all })).toEqual({ ids: [], total: 0 });
      });

      it('gives an empty page and total 0 for a window with no customers', async () => {
        expect(await listIds({ gt: 89, ...all })).toEqual({ ids: [], total: 0 });
        expect(await listIds({ lt: 1, ...all })).toEqual({ ids: [], total: 0 });
        expect(await listIds({ gt: 34, lt: 55, ...all })).toEqual({ ids: [], total: 0 });
      });

      it('pages with offset and limit, the total ignoring both', async () => {
        expect(await listIds({ offset: 0, limit: 3 })).toEqual({ ids: [1, 2, 3], total: 10 });
        expect(await listIds({ offset: 3, limit: 3 })).toEqual({ ids: [5, 8, 13], total: 10 });
        expect(await listIds({ offset: 9, limit: 3 })).toEqual({ ids: [89], total: 10 });
        expect(await listIds({ gt: 2, lt: 89, offset: 2, limit: 2 })).toEqual({ ids: [8, 13], total: 7 });
      });

      it('gives an empty page with the right total past the end', async () => {
        expect(await listIds({ offset: 10, limit: 3 })).toEqual({ ids: [], total: 10 });
        expect(await listIds({ offset: 1000, limit: 100 })).toEqual({ ids: [], total: 10 });
        expect(await listIds({ gt: 50, offset: 2, limit: 5 })).toEqual({ ids: [], total: 2 });
      });

      it('keeps the list sorted when ids arrive out of order', async () => {
        await store.applyBatch(
          [
            customer(4, 20, fullCustomer(4)),
            customer(100, 21, fullCustomer(100)),
            customer(0, 22, fullCustomer(0)),
          ],
          checkpoint(22),
        );
        await store.applyBatch([customer(30, 23, fullCustomer(30))], checkpoint(23));

        const expected = [0, 1, 2, 3, 4, 5, 8, 13, 21, 30, 34, 55, 89, 100];
        expect(await store.listCustomers(all)).toEqual({
          items: expected.map(fullCustomer),
          total: expected.length,
        });
        expect(await listIds({ gt: 3, lt: 34, offset: 1, limit: 4 })).toEqual({
          ids: [5, 8, 13, 21],
          total: 6,
        });
      });
    });

    describe('listUsers', () => {
      const at = (second: number) => `2026-11-22T09:15:${String(second).padStart(2, '0')}.000Z`;
      const registered = (id: string, second: number): UserDocument => ({
        ...ada,
        id,
        name: `User ${id}`,
        createdon: at(second),
        modifiedon: at(second),
      });
      const listUserIds = async (offset: number, limit: number) => {
        const page = await store.listUsers({ offset, limit });
        return { ids: page.items.map((item) => item.id), total: page.total };
      };

      it('lists no users, total 0, before any', async () => {
        expect(await store.listUsers(all)).toEqual({ items: [], total: 0 });
      });

      it('sorts by createdon, then by id, whatever order they were written in', async () => {
        // Registrations land out of createdon order (writers on other hosts), and two share one.
        const users = [
          registered('u-c', 3),
          registered('u-b', 1),
          registered('u-a', 3),
          registered('u-d', 2),
        ];
        await store.applyBatch(
          users.map((doc, index) => user(doc.id, index + 1, doc)),
          checkpoint(users.length),
        );

        expect(await store.listUsers(all)).toEqual({
          items: [users[1], users[3], users[2], users[0]],
          total: 4,
        });
      });

      it('orders ids by their UTF-8 bytes, as MongoDB does', async () => {
        // UTF-16 puts the emoji (a surrogate pair) before U+FF21; UTF-8, and MongoDB, after it.
        const ids = ['u-\u{1F600}', 'u-\uFF21', 'u-z'];
        await store.applyBatch(
          ids.map((id, index) => user(id, index + 1, registered(id, 5))),
          checkpoint(ids.length),
        );

        expect((await listUserIds(0, 10)).ids).toEqual(['u-z', 'u-\uFF21', 'u-\u{1F600}']);
      });

      it('pages with offset and limit, the total counting every user', async () => {
        const ids = Array.from({ length: 7 }, (_, index) => `u-${index}`);
        await store.applyBatch(
          ids.map((id, index) => user(id, index + 1, registered(id, index))),
          checkpoint(ids.length),
        );

        expect(await listUserIds(0, 3)).toEqual({ ids: ['u-0', 'u-1', 'u-2'], total: 7 });
        expect(await listUserIds(3, 3)).toEqual({ ids: ['u-3', 'u-4', 'u-5'], total: 7 });
        expect(await listUserIds(6, 3)).toEqual({ ids: ['u-6'], total: 7 });
        expect(await listUserIds(7, 3)).toEqual({ ids: [], total: 7 });
        expect(await listUserIds(1_000_000, 100)).toEqual({ ids: [], total: 7 });
        expect(await listUserIds(2, 0)).toEqual({ ids: [], total: 7 });
      });

      it('shows patches in place: a patch does not move a user', async () => {
        await store.applyBatch(
          [user('u-1', 1, registered('u-1', 1)), user('u-2', 2, registered('u-2', 2))],
          checkpoint(2),
        );
        await store.applyBatch(
          [user('u-1', 3, { name: 'Renamed', modifiedon: at(9), revision: 1 })],
          checkpoint(3),
        );

        expect(await store.listUsers(all)).toEqual({
          items: [
            { ...registered('u-1', 1), name: 'Renamed', modifiedon: at(9), revision: 1 },
            registered('u-2', 2),
          ],
          total: 2,
        });
      });

      it('moves a user whose createdon changes, and lists one set before createdon first', async () => {
        await store.applyBatch(
          [user('u-1', 1, registered('u-1', 1)), user('u-2', 2, { name: 'No date yet' })],
          checkpoint(2),
        );
        expect((await listUserIds(0, 10)).ids).toEqual(['u-2', 'u-1']);

        await store.applyBatch(
          [user('u-2', 3, { createdon: at(0) }), user('u-1', 4, { createdon: at(5) })],
          checkpoint(4),
        );
        expect(await listUserIds(0, 10)).toEqual({ ids: ['u-2', 'u-1'], total: 2 });
        await store.applyBatch([user('u-2', 5, { createdon: at(6) })], checkpoint(5));
        expect(await listUserIds(0, 10)).toEqual({ ids: ['u-1', 'u-2'], total: 2 });
      });

      it('refuses a negative or fractional offset or limit', async () => {
        for (const query of [
          { offset: -1, limit: 1 },
          { offset: 0, limit: -1 },
          { offset: 0.5, limit: 1 },
        ]) {
          await expect(store.listUsers(query)).rejects.toThrow(RangeError);
        }
      });
    });

    describe('listCustomersJson', () => {
      it('sends byte for byte the JSON of listCustomers, with its count and total', async () => {
        await seedCustomers([1, 2, 3, 5, 8]);
        await store.applyBatch(
          [
            customer(9, 30, { ...fullCustomer(9), name: 'Zoë "Q" \\ \u0001 😀' }),
            customer(11, 31, { name: 'Part' }),
          ],
          checkpoint(31),
        );

        for (const query of [
          all,
          { gt: 2, lt: 9, offset: 1, limit: 2 },
          { offset: 5, limit: 10 },
          { gt: 9, lt: 2, ...all },
        ]) {
          const page = await store.listCustomers(query);
          const json = await store.listCustomersJson(query);
          expect(json.json.toString('utf8')).toBe(JSON.stringify(page.items));
          expect({ count: json.count, total: json.total }).toEqual({
            count: page.items.length,
            total: page.total,
          });
        }
      });
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
