import { Position, position } from '@chronicle/event-store';
import { MemoryReadStore } from '../memory/memory-read-store';
import { MongoReadStore } from '../mongo/mongo-read-store';
import { MongoRebuildTarget } from '../mongo/mongo-rebuild-target';
import { ReadStore } from '../read-store.port';
import { CatchUp, MemoryRebuildTarget } from './rebuild-target';

const CHECKPOINT = 'read-models';

const customer = (id: number, at: number) => ({
  collection: 'customers' as const,
  id,
  position: position(at),
  set: { id, name: `C${id}` },
});

describe('MemoryRebuildTarget', () => {
  let live: MemoryReadStore;
  let target: MemoryRebuildTarget;

  beforeEach(() => {
    live = new MemoryReadStore();
    target = new MemoryRebuildTarget(live, CHECKPOINT);
  });

  afterEach(() => live.close());

  it('creates empty in-memory generations and discards them by closing them', async () => {
    const generation = await target.create();
    expect(generation).toBeInstanceOf(MemoryReadStore);
    expect(generation).not.toBe(live);
    expect((await generation.listCustomers({ offset: 0, limit: 10 })).total).toBe(0);

    await target.discard(generation);
    await expect(generation.ping()).rejects.toThrow('closed');
    await expect(live.ping()).resolves.toBeUndefined();
  });

  it('swaps in a generation at once when the live models are not ahead of it', async () => {
    const generation = await target.create();
    await generation.applyBatch([customer(1, 5)], { projection: CHECKPOINT, position: position(5) });
    const catchUp = jest.fn<ReturnType<CatchUp>, Parameters<CatchUp>>();

    expect(await target.swapIn(generation, position(5), catchUp, 'all')).toBe(0);

    expect(catchUp).not.toHaveBeenCalled();
    expect((await live.listCustomers({ offset: 0, limit: 10 })).items).toEqual([{ id: 1, name: 'C1' }]);
    expect(await live.getCheckpoint(CHECKPOINT)).toEqual(position(5));
  });

  it('catches the generation up, round after round, until the live models are not ahead', async () => {
    await live.applyBatch([], { projection: CHECKPOINT, position: position(9) });
    const generation = await target.create();
    const afters: (Position | null)[] = [];
    // The live models move on once more while the first round catches up.
    const catchUp: CatchUp = async (store, after, checkpointName) => {
      afters.push(after);
      expect(store).toBe(generation);
      expect(checkpointName).toBe(CHECKPOINT);
      const to = afters.length === 1 ? 9 : 12;
      if (afters.length === 1) await live.applyBatch([], { projection: CHECKPOINT, position: position(12) });
      await store.applyBatch([customer(to, to)], { projection: CHECKPOINT, position: position(to) });
      return { events: afters.length === 1 ? 4 : 3, position: position(to) };
    };

    expect(await target.swapIn(generation, position(5), catchUp, 'all')).toBe(7);

    expect(afters).toEqual([position(5), position(9)]);
    expect(await live.getCheckpoint(CHECKPOINT)).toEqual(position(12));
  });

  it('gives up after 100 rounds against live models that stay ahead', async () => {
    await live.applyBatch([], { projection: CHECKPOINT, position: position(9) });
    const generation = await target.create();
    const catchUp = jest.fn<ReturnType<CatchUp>, Parameters<CatchUp>>(() =>
      Promise.resolve({ events: 0, position: position(1) }),
    );

    await expect(target.swapIn(generation, null, catchUp, 'all')).rejects.toThrow(
      'The rebuild could not catch up with the live read models in 100 rounds',
    );
    expect(catchUp).toHaveBeenCalledTimes(100);
  });

  it('swaps in only the collections named', async () => {
    await live.applyBatch([customer(1, 1)], { projection: CHECKPOINT, position: position(1) });
    const generation = await target.create();
    await generation.applyBatch(
      [{ collection: 'users', id: 'u', position: position(1), set: { name: 'U' } }],
      { projection: CHECKPOINT, position: position(1) },
    );

    expect(await target.swapIn(generation, position(1), jest.fn(), ['users'])).toBe(0);

    expect((await live.listCustomers({ offset: 0, limit: 10 })).total).toBe(1);
    expect(await live.getUser('u')).toEqual({ id: 'u', name: 'U' });
  });
});

describe('MongoRebuildTarget', () => {
  const live = {} as MongoReadStore;
  const target = new MongoRebuildTarget(live, 'mongodb://db', 'chronicle');
  const generation = () =>
    ({
      promote: jest.fn(() => Promise.resolve()),
      close: jest.fn(() => Promise.resolve()),
      drop: jest.fn(() => Promise.resolve()),
    }) as unknown as MongoReadStore & Record<'promote' | 'close' | 'drop', jest.Mock>;

  it('creates each generation in collections of its own prefix, named after its purpose', async () => {
    const created = {} as MongoReadStore;
    const connect = jest.spyOn(MongoReadStore, 'connect').mockResolvedValue(created);
    try {
      expect(await target.create('rebuild')).toBe(created);
      await target.create('verify');
      await target.create('verify');

      const prefixes = connect.mock.calls.map(([uri, options]) => {
        expect(uri).toBe('mongodb://db');
        expect(options?.dbName).toBe('chronicle');
        return options!.collectionPrefix!;
      });
      expect(prefixes[0]).toMatch(/^rebuild_[0-9a-f]{8}_$/);
      expect(prefixes[1]).toMatch(/^verify_[0-9a-f]{8}_$/);
      expect(prefixes[2]).not.toBe(prefixes[1]);
    } finally {
      connect.mockRestore();
    }
  });

  it('promotes every collection, closes the generation, then catches the live ones up under their own checkpoint', async () => {
    const promoted = generation();
    const catchUp = jest.fn<ReturnType<CatchUp>, Parameters<CatchUp>>(() => {
      expect(promoted.close).toHaveBeenCalled();
      return Promise.resolve({ events: 6, position: position(20) });
    });

    expect(await target.swapIn(promoted, position(14), catchUp, 'all')).toBe(6);

    expect(promoted.promote).toHaveBeenCalledWith(undefined);
    expect(catchUp).toHaveBeenCalledWith(live, position(14), 'rebuild-catch-up');
  });

  it('promotes only the collections named', async () => {
    const promoted = generation();

    await target.swapIn(promoted, null, () => Promise.resolve({ events: 0, position: null }), ['users']);

    expect(promoted.promote).toHaveBeenCalledWith(['users']);
  });

  it('discards a generation by dropping its collections', async () => {
    const dropped = generation();

    await target.discard(dropped as ReadStore);

    expect(dropped.drop).toHaveBeenCalledTimes(1);
    expect(dropped.close).not.toHaveBeenCalled();
  });
});
