import { position } from '@chronicle/event-store';
import { MemoryReadStore } from '@chronicle/read-models';
import { ListUsersQuery } from './list-users.query';
import { ListUsersHandler } from './list-users.handler';

describe('ListUsersHandler', () => {
  let readStore: MemoryReadStore;
  let handler: ListUsersHandler;

  beforeEach(async () => {
    readStore = new MemoryReadStore();
    handler = new ListUsersHandler(readStore);
    // Given five users in the read model, created a minute apart: u-5 first.
    const changes = Array.from({ length: 5 }, (_, i) => ({
      collection: 'users' as const,
      id: `u-${5 - i}`,
      position: position(i + 1),
      set: {
        id: `u-${5 - i}`,
        name: `User ${5 - i}`,
        age: 30 + i,
        createdon: `2026-11-27T09:0${i}:00.000Z`,
        modifiedon: `2026-11-27T09:0${i}:00.000Z`,
        revision: 0,
      },
    }));
    await readStore.applyBatch(changes, { projection: 'read-models', position: position(5) });
  });
  afterEach(() => readStore.close());

  it('answers the page asked for, in creation order, with the count of all users', async () => {
    const page = await handler.execute(new ListUsersQuery(2, 2));

    expect(page.total).toBe(5);
    expect(page.items.map((user) => user.id)).toEqual(['u-3', 'u-2']);
    expect(page.items[0]).toEqual({
      id: 'u-3',
      name: 'User 3',
      age: 32,
      createdon: '2026-11-27T09:02:00.000Z',
      modifiedon: '2026-11-27T09:02:00.000Z',
      revision: 0,
    });
  });

  it('answers the first page, and a short last one', async () => {
    expect((await handler.execute(new ListUsersQuery(1, 2))).items.map((user) => user.id)).toEqual([
      'u-5',
      'u-4',
    ]);
    expect((await handler.execute(new ListUsersQuery(3, 2))).items.map((user) => user.id)).toEqual(['u-1']);
  });

  it('answers an empty page far past the end', async () => {
    const page = await handler.execute(new ListUsersQuery(Number.MAX_SAFE_INTEGER, 100));

    expect(page).toEqual({ items: [], total: 5 });
  });
});
