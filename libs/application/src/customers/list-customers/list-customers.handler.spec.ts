import { position } from '@chronicle/event-store';
import { MemoryReadStore } from '@chronicle/read-models';
import { ListCustomersQuery } from './list-customers.query';
import { ListCustomersHandler } from './list-customers.handler';

describe('ListCustomersHandler', () => {
  let readStore: MemoryReadStore;
  let handler: ListCustomersHandler;

  beforeEach(async () => {
    readStore = new MemoryReadStore();
    handler = new ListCustomersHandler(readStore);
    // Given customers 1 to 7 in the read model.
    const changes = Array.from({ length: 7 }, (_, i) => ({
      collection: 'customers' as const,
      id: i + 1,
      position: position(i + 1),
      set: {
        id: i + 1,
        name: `Customer ${i + 1}`,
        email: `c${i + 1}@example.com`,
        createdon: '2026-11-27T09:00:00.000Z',
      },
    }));
    await readStore.applyBatch(changes, { projection: 'read-models', position: position(7) });
  });
  afterEach(() => readStore.close());

  const ids = (json: Buffer) => (JSON.parse(json.toString('utf8')) as { id: number }[]).map((c) => c.id);

  it('answers the page asked for, as the JSON the API sends, with the count of all that match', async () => {
    const page = await handler.execute(new ListCustomersQuery(2, 3));

    expect(ids(page.json)).toEqual([4, 5, 6]);
    expect(page).toMatchObject({ count: 3, total: 7 });
    expect(JSON.parse(page.json.toString('utf8'))[0]).toEqual({
      id: 4,
      name: 'Customer 4',
      email: 'c4@example.com',
      createdon: '2026-11-27T09:00:00.000Z',
    });
  });

  it('pages within the ids between gt and lt', async () => {
    const first = await handler.execute(new ListCustomersQuery(1, 2, 2, 7));
    const second = await handler.execute(new ListCustomersQuery(2, 2, 2, 7));
    const third = await handler.execute(new ListCustomersQuery(3, 2, 2, 7));

    expect([ids(first.json), ids(second.json), ids(third.json)]).toEqual([[3, 4], [5, 6], []]);
    expect([first.total, third.count]).toEqual([4, 0]);
  });

  it('answers an empty page far past the end', async () => {
    const page = await handler.execute(new ListCustomersQuery(Number.MAX_SAFE_INTEGER, 100));

    expect(ids(page.json)).toEqual([]);
    expect(page.total).toBe(7);
  });
});
