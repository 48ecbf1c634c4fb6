import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { position, SqliteCheckpointStore, SqliteEventStore } from '@chronicle/event-store';
import { MemoryReadStore } from '../memory/memory-read-store';
import { ProjectionProcessor } from '../projection-processor';
import { ALL_PROJECTIONS } from '../projections/all-projections';
import { Projection } from '../projections/projection';
import { ReadModelRebuilder, UnknownProjectionError } from './read-model-rebuilder';
import { ParkedEvents, replayInto } from './replay';
import { MemoryRebuildTarget, RebuildTarget } from './rebuild-target';
import { ReadStore } from '../read-store.port';
import { reaches } from '../projection-processor.spec-helper';

const CHECKPOINT = 'read-models';
const metadata = {
  actor: 'system',
  correlationId: 'c',
  causationId: null,
  occurredAt: '2026-01-01T00:00:00.000Z',
};
const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** Registers customer `id` in its own stream. */
const registerCustomer = (events: SqliteEventStore, id: number) =>
  events.append(
    `customer-${id}`,
    [
      {
        id: randomUUID(),
        type: 'CustomerRegistered.v1',
        data: { customerId: id, name: `C${id}`, email: `c${id}@example.com`, createdon: metadata.occurredAt },
        metadata,
      },
    ],
    'no_stream',
  );

describe('ReadModelRebuilder on memory read models', () => {
  let dir: string;
  let events: SqliteEventStore;
  let live: MemoryReadStore;
  let runner: ProjectionProcessor;

  const register = (id: number) => registerCustomer(events, id);
  const names = async () =>
    (await live.listCustomers({ offset: 0, limit: 100_000 })).items.map((c) => c.name);
  const rebuilder = (projections = ALL_PROJECTIONS) =>
    new ReadModelRebuilder(events, new MemoryRebuildTarget(live, CHECKPOINT), projections, CHECKPOINT);

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chronicle-rebuild-'));
    events = SqliteEventStore.open(dir, { pollIntervalMs: 5 });
    // Appended together, so that group commit writes them in a few transactions, not 3,000
    // fsyncs: the store still gives them positions in this order.
    await Promise.all(Array.from({ length: 3000 }, (_, index) => register(index + 1)));
    live = new MemoryReadStore();
    runner = new ProjectionProcessor(events, live, ALL_PROJECTIONS, {
      checkpointName: CHECKPOINT,
      parking: SqliteCheckpointStore.open(':memory:'),
      logger: silent,
    });
    await runner.start();
    // A document no event made: gone after a rebuild, kept by a rebuild that fails.
    await live.applyBatch(
      [{ collection: 'customers', id: 999_999, position: position(1), set: { name: 'stray' } }],
      {
        projection: 'test',
        position: position(1),
      },
    );
  });

  afterEach(async () => {
    await runner.stop();
    await events.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fails with the swap’s own error, not with the clean-up’s, when the swap fails', async () => {
    const target = new MemoryRebuildTarget(live, CHECKPOINT);
    jest.spyOn(target, 'swapIn').mockRejectedValue(new Error('catch-up failed'));
    jest.spyOn(target, 'discard').mockRejectedValue(new Error('The read store is closed'));

    await expect(
      new ReadModelRebuilder(events, target, ALL_PROJECTIONS, CHECKPOINT).rebuild(),
    ).rejects.toThrow('catch-up failed');
  });

  it('swaps in a fresh replay: the stray document is gone, every customer is there', async () => {
    const progress: number[] = [];
    const result = await rebuilder().rebuild({ onProgress: ({ fraction }) => progress.push(fraction) });
    expect(result.events).toBe(3000);
    expect(result.eventsPerSecond).toBeGreaterThan(0);
    // Two batches of at most 2,000 events: the first is that share of the log's positions.
    const head = (await events.headPosition())!;
    let firstBatchEnd = position(0);
    for await (const event of events.readAll({ limit: 2000 })) firstBatchEnd = event.position;
    expect(progress).toEqual([Number(firstBatchEnd.commit) / Number(head.commit), 1]);
    expect(progress[0]).toBeGreaterThan(0);
    expect(progress[0]).toBeLessThan(1);
    expect(await names()).toHaveLength(3000);
    expect(await names()).not.toContain('stray');
  });

  it('rebuilds one projection alone: its collection is swapped, the others and the checkpoint stay', async () => {
    await live.applyBatch(
      [{ collection: 'users', id: 'u-stray', position: position(1), set: { name: 'stray user' } }],
      { projection: 'test', position: position(1) },
    );
    const checkpoint = await live.getCheckpoint(CHECKPOINT);

    const result = await rebuilder().rebuild({ projection: 'users' });

    // The users projection reads user events only: none here, so its collection is empty now.
    expect(result.events).toBe(0);
    expect(await live.getUser('u-stray')).toBeNull();
    expect(await names()).toContain('stray');
    expect(await names()).toHaveLength(3001);
    expect(await live.getCheckpoint(CHECKPOINT)).toEqual(checkpoint);
    // The live processor goes on feeding both collections.
    await register(3001);
    await reaches(runner, (await events.headPosition())!, 10_000);
    expect(await names()).toContain('C3001');
  });

  it('refuses a projection name that names none, changing nothing', async () => {
    await expect(rebuilder().rebuild({ projection: 'nobody' })).rejects.toThrow(UnknownProjectionError);
    expect(await names()).toContain('stray');
  });

  it('skips only the known types no projection uses; one it does not know is parked, and it checkpoints at the head', async () => {
    const reads = jest.spyOn(events, 'readAll');
    const unknownId = randomUUID();
    await events.append(
      'sequence-other',
      [
        { id: randomUUID(), type: 'CustomerNumberAssigned.v1', data: {}, metadata },
        { id: unknownId, type: 'Unrelated.v1', data: {}, metadata },
      ],
      'no_stream',
    );
    const head = await events.headPosition();
    const target = new MemoryReadStore();
    const parking = SqliteCheckpointStore.open(':memory:');
    try {
      const parked = new ParkedEvents(CHECKPOINT, parking);
      const replayed = await replayInto(events, target, ALL_PROJECTIONS, {
        checkpointName: CHECKPOINT,
        parked,
      });

      expect(replayed).toEqual({ events: 3001, position: head });
      expect(await target.getCheckpoint(CHECKPOINT)).toEqual(head);
      const except = reads.mock.calls[0][0]?.exceptTypes;
      expect(except).toContain('CustomerNumberAssigned.v1');
      for (const used of ['CustomerRegistered.v1', 'UserRegistered.v2', 'UserPatched.v1'])
        expect(except).not.toContain(used);
      expect(parked.summary()).toEqual({
        count: 1,
        first: [
          expect.objectContaining({
            eventId: unknownId,
            type: 'Unrelated.v1',
            reason: expect.stringContaining('Unrelated.v1 is not an event type this build knows'),
          }),
        ],
      });
      expect(await parking.parked(CHECKPOINT)).toEqual([
        expect.objectContaining({ eventId: unknownId, type: 'Unrelated.v1', attempts: 1 }),
      ]);
    } finally {
      reads.mockRestore();
      await parking.close();
      await target.close();
    }
  });

  it('checkpoints at the head when the log ends with events no projection uses, and lists ten parked events of eleven', async () => {
    await events.append(
      'sequence-other',
      [
        ...Array.from({ length: 11 }, () => ({ id: randomUUID(), type: 'Unrelated.v1', data: {}, metadata })),
        { id: randomUUID(), type: 'CustomerNumberAssigned.v1', data: {}, metadata },
      ],
      'no_stream',
    );
    const head = await events.headPosition();
    const target = new MemoryReadStore();
    try {
      const parked = new ParkedEvents(CHECKPOINT, null);
      const replayed = await replayInto(events, target, ALL_PROJECTIONS, {
        checkpointName: CHECKPOINT,
        parked,
      });

      expect(replayed).toEqual({ events: 3011, position: head });
      expect(await target.getCheckpoint(CHECKPOINT)).toEqual(head);
      expect(parked.summary().count).toBe(11);
      expect(parked.summary().first).toHaveLength(10);
    } finally {
      await target.close();
    }
  });

  it('parks an event a projection throws on, as the live processor does, and goes on', async () => {
    const failing: Projection = {
      name: 'failing',
      collection: 'customers',
      eventTypes: ['CustomerRegistered.v1'],
      project: (event) => {
        if ((event.data as { customerId: number }).customerId === 1500) throw new Error('no such thing');
        return [];
      },
    };
    const result = await rebuilder([...ALL_PROJECTIONS, failing]).rebuild();
    expect(result.parked).toEqual({
      count: 1,
      first: [
        expect.objectContaining({
          stream: 'customer-1500',
          reason: expect.stringContaining('no such thing'),
        }),
      ],
    });
    // Parked whole, as the live processor parks it: no projection applies a part of it.
    expect(await names()).toHaveLength(2999);
    expect(await names()).not.toContain('C1500');
  });

  it('leaves the live models untouched when the replay fails halfway', async () => {
    const readAll = events.readAll.bind(events);
    jest.spyOn(events, 'readAll').mockImplementation(async function* (options) {
      let seen = 0;
      for await (const event of readAll(options)) {
        if (++seen === 2500) throw new Error('disk on fire');
        yield event;
      }
    });
    await expect(rebuilder().rebuild()).rejects.toThrow('disk on fire');
    expect(await names()).toContain('stray');
    expect(await names()).toHaveLength(3001);
  });

  it('leaves the live models untouched when aborted', async () => {
    const controller = new AbortController();
    const rebuild = rebuilder().rebuild({ signal: controller.signal, onProgress: () => controller.abort() });
    await expect(rebuild).rejects.toThrow();
    expect(await names()).toContain('stray');
  });

  it('catches up with events the live models applied during the replay before swapping', async () => {
    let appended = false;
    const result = await rebuilder().rebuild({
      onProgress: () => {
        if (appended) return;
        appended = true;
        void register(5000);
      },
    });
    await reaches(runner, (await events.headPosition())!, 5000);
    expect(result.events).toBe(3001);
    expect(await names()).toHaveLength(3001);
    expect((await live.listCustomers({ gt: 4999, offset: 0, limit: 1 })).items[0]?.name).toBe('C5000');
  });

  it('verify reports no difference for clean models, and each corrupted document', async () => {
    expect(await rebuilder().verify()).toMatchObject({
      differences: 1,
      first: [{ id: 999_999, rebuilt: null }],
    });
    await rebuilder().rebuild();
    expect(await rebuilder().verify()).toEqual({
      differences: 0,
      documents: 3000,
      events: 3000,
      first: [],
      parked: { count: 0, first: [] },
    });
  });
});

describe('ReadModelRebuilder, in detail', () => {
  let dir: string;
  let events: SqliteEventStore;
  let live: MemoryReadStore;
  let checkpoints: SqliteCheckpointStore;

  const register = (id: number) => registerCustomer(events, id);
  /** What the live processor does: applies the events `store` has not seen yet. */
  const catchUp = async (store: ReadStore) =>
    replayInto(events, store, ALL_PROJECTIONS, {
      after: await store.getCheckpoint(CHECKPOINT),
      checkpointName: CHECKPOINT,
      parked: new ParkedEvents(CHECKPOINT, null),
    });
  const customerNames = async () =>
    (await live.listCustomers({ offset: 0, limit: 100 })).items.map((customer) => customer.name);
  const rebuilder = (processors: ConstructorParameters<typeof ReadModelRebuilder>[4] = null) =>
    new ReadModelRebuilder(
      events,
      new MemoryRebuildTarget(live, CHECKPOINT),
      ALL_PROJECTIONS,
      CHECKPOINT,
      processors,
    );

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chronicle-rebuild-detail-'));
    events = SqliteEventStore.open(dir);
    checkpoints = SqliteCheckpointStore.open(':memory:');
    await Promise.all([1, 2, 3].map(register));
    live = new MemoryReadStore();
    await replayInto(events, live, ALL_PROJECTIONS, {
      checkpointName: CHECKPOINT,
      parked: new ParkedEvents(CHECKPOINT, null),
    });
  });

  afterEach(async () => {
    await checkpoints.close();
    await events.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names the projections there are when asked for one that is not', async () => {
    const refused = rebuilder().rebuild({ projection: 'orders' });
    await expect(refused).rejects.toThrow(new UnknownProjectionError('orders', ['customers', 'users']));
    await expect(refused).rejects.toMatchObject({
      name: 'UnknownProjectionError',
      code: 'unknown-projection',
      message: 'No projection is named "orders"; the projections are customers, users',
    });
  });

  it('reports the events replayed, the time taken and the rate, and its progress to the end', async () => {
    const clock = jest
      .spyOn(process.hrtime, 'bigint')
      .mockReturnValueOnce(5_000_000_000n)
      .mockReturnValueOnce(6_234_567_890n);
    const progress: { events: number; fraction: number }[] = [];
    try {
      const result = await rebuilder().rebuild({ onProgress: (each) => progress.push(each) });

      expect(result).toEqual({
        events: 3,
        seconds: 1.235,
        eventsPerSecond: 2,
        parked: { count: 0, first: [] },
      });
      expect(progress).toEqual([{ events: 3, fraction: 1 }]);
    } finally {
      clock.mockRestore();
    }
  });

  it('rates a rebuild that took no measurable time by a microsecond', async () => {
    const clock = jest.spyOn(process.hrtime, 'bigint').mockReturnValue(7n);
    try {
      expect(await rebuilder().rebuild()).toEqual({
        events: 3,
        seconds: 0,
        eventsPerSecond: 3_000_000,
        parked: { count: 0, first: [] },
      });
    } finally {
      clock.mockRestore();
    }
  });

  it('reports no progress and no events for an empty log', async () => {
    await events.close();
    rmSync(dir, { recursive: true, force: true });
    dir = mkdtempSync(join(tmpdir(), 'chronicle-rebuild-detail-'));
    events = SqliteEventStore.open(dir);
    live = new MemoryReadStore();
    const progress: unknown[] = [];

    expect((await rebuilder().rebuild({ onProgress: (each) => progress.push(each) })).events).toBe(0);
    expect(progress).toEqual([]);
    expect(await live.getCheckpoint(CHECKPOINT)).toBeNull();
  });

  describe('with the live checkpoint beyond the end of the log (the log was wiped)', () => {
    beforeEach(async () => {
      await live.applyBatch([], { projection: CHECKPOINT, position: position(1_000_000) });
    });

    it('refuses to rebuild one projection', async () => {
      await expect(rebuilder().rebuild({ projection: 'customers' })).rejects.toThrow(
        "The read models' checkpoint lies beyond the end of the event log: rebuild every projection, not one",
      );
      expect(await live.getCheckpoint(CHECKPOINT)).toEqual(position(1_000_000));
    });

    it('rebuilds every projection, leaving the checkpoint at the end of the log, and moves other consumers beyond it to its start', async () => {
      // A target that swaps in whatever the live models hold, as MongoDB's renames do: the
      // in-memory one refuses a generation behind its live checkpoint (in memory, a live
      // checkpoint never outlives the log it was read from).
      const swapped: ReadStore[] = [];
      const target: RebuildTarget = {
        live,
        create: () => Promise.resolve(new MemoryReadStore()),
        swapIn: async (generation, after, catchUpWith) => {
          swapped.push(generation);
          const caughtUp = (await catchUpWith(live, after, 'rebuild-catch-up')).events;
          // Appended after the swap: the replay into the live models that follows applies it.
          await register(4);
          return caughtUp;
        },
        discard: (generation) => generation.close(),
      };
      await checkpoints.store('saga:beyond', position(2_000_000));
      const head = await events.headPosition();
      await checkpoints.store('saga:within', head!);

      const result = await new ReadModelRebuilder(events, target, ALL_PROJECTIONS, CHECKPOINT, {
        checkpoints,
        names: ['saga:beyond', 'saga:within', 'saga:never'],
      }).rebuild();

      expect(result.events).toBe(4);
      expect(swapped).toHaveLength(1);
      expect(await customerNames()).toEqual(['C1', 'C2', 'C3', 'C4']);
      expect(await live.getCheckpoint(CHECKPOINT)).toEqual(await events.headPosition());
      expect(await checkpoints.load('saga:beyond')).toEqual(position(0));
      expect(await checkpoints.load('saga:within')).toEqual(head);
      expect(await checkpoints.load('saga:never')).toBeNull();
    });
  });

  it('moves the live checkpoint to the replay’s when it rebuilds every projection', async () => {
    // Appended while the live models were not following: the replay applies it.
    await register(4);

    expect((await rebuilder().rebuild()).events).toBe(4);

    expect(await customerNames()).toEqual(['C1', 'C2', 'C3', 'C4']);
    expect(await live.getCheckpoint(CHECKPOINT)).toEqual(await events.headPosition());
  });

  it('counts the events it catches up with before the swap', async () => {
    const target = new MemoryRebuildTarget(live, CHECKPOINT);
    const swapIn = target.swapIn.bind(target);
    // The live models apply an event the new generation has not seen just before the swap.
    jest.spyOn(target, 'swapIn').mockImplementation(async (...args) => {
      await register(4);
      await catchUp(live);
      return swapIn(...args);
    });

    const result = await new ReadModelRebuilder(events, target, ALL_PROJECTIONS, CHECKPOINT).rebuild();

    expect(result.events).toBe(4);
    expect(await customerNames()).toEqual(['C1', 'C2', 'C3', 'C4']);
    expect(await live.getCheckpoint(CHECKPOINT)).toEqual(await events.headPosition());
  });

  it('leaves other consumers alone when the live checkpoint is within the log', async () => {
    await checkpoints.store('saga:beyond', position(2_000_000));
    await rebuilder({ checkpoints, names: [] }).rebuild();
    expect(await checkpoints.load('saga:beyond')).toEqual(position(2_000_000));
  });

  it('verifies: the differences that remain after the live models catch up, the first ten of them', async () => {
    // Twelve documents only the live models have, and one the live models lack.
    await live.applyBatch(
      Array.from({ length: 12 }, (_, i) => ({
        collection: 'customers' as const,
        id: 100 + i,
        position: position(1),
        set: { name: 'stray' },
      })),
      { projection: 'other', position: position(1) },
    );
    await register(4);

    const catchingUp = replayInto(events, live, ALL_PROJECTIONS, {
      after: await live.getCheckpoint(CHECKPOINT),
      checkpointName: CHECKPOINT,
      parked: new ParkedEvents(CHECKPOINT, null),
    });
    const verified = await rebuilder().verify();
    await catchingUp;

    expect(verified.differences).toBe(12);
    expect(verified.documents).toBe(16);
    expect(verified.events).toBe(4);
    expect(verified.first).toHaveLength(10);
    expect(verified.first[0]).toEqual({
      collection: 'customers',
      id: 100,
      live: { id: 100, name: 'stray' },
      rebuilt: null,
    });
  });

  it('verify looks again three times at a difference that does not settle, replaying the events appended meanwhile', async () => {
    await live.applyBatch(
      [{ collection: 'customers', id: 100, position: position(1), set: { name: 'stray' } }],
      {
        projection: 'other',
        position: position(1),
      },
    );
    const readAll = events.readAll.bind(events);
    let appended = false;
    // Once the replay has read the log, another event comes, and the live models apply it.
    jest.spyOn(events, 'readAll').mockImplementation(async function* (options) {
      yield* readAll(options);
      if (appended) return;
      appended = true;
      await register(4);
      await catchUp(live);
    });
    const reads = jest.spyOn(live, 'listCustomers');

    const verified = await rebuilder().verify();

    // C4, in the live models but not yet replayed, differs at first and settles in the first round.
    expect(verified).toEqual({
      differences: 1,
      documents: 5,
      events: 4,
      first: [{ collection: 'customers', id: 100, live: { id: 100, name: 'stray' }, rebuilt: null }],
      parked: { count: 0, first: [] },
    });
    // Each round reads the differences left again: C4 and the stray, then the stray twice.
    expect(reads).toHaveBeenCalledTimes(4);
  });

  it.each([
    ['a few events behind', 4, () => register(4)],
    [
      'empty',
      3,
      async () => {
        await live.close();
        live = new MemoryReadStore();
      },
    ],
  ])(
    'verify reports no difference when live models %s catch up while it waits, and stops waiting once they have',
    async (_, customers, setUp) => {
      await setUp();
      const getCheckpoint = live.getCheckpoint.bind(live);
      const caughtUp: Promise<void>[] = [];
      let done = false;
      let pollsAfter = 0;
      // The live models catch up a second after the verify first looks at their checkpoint.
      jest.spyOn(live, 'getCheckpoint').mockImplementation((name) => {
        if (done) pollsAfter++;
        if (caughtUp.length === 0)
          caughtUp.push(
            new Promise((resolve) => setTimeout(resolve, 1000))
              .then(() => catchUp(live))
              .then(() => {
                done = true;
              }),
          );
        return getCheckpoint(name);
      });

      const verified = await rebuilder().verify();
      await Promise.all(caughtUp);

      expect(verified).toEqual({
        differences: 0,
        documents: customers,
        events: customers,
        first: [],
        parked: { count: 0, first: [] },
      });
      expect(done).toBe(true);
      expect(pollsAfter).toBe(1);
    },
  );

  it.each([
    [10_000, 'reads each document again'],
    [10_001, 'reports them without reading each document again'],
  ])('verify with %d differences %s', async (count, _) => {
    await live.applyBatch(
      Array.from({ length: count }, (_, i) => ({
        collection: 'customers' as const,
        id: 100 + i,
        position: position(1),
        set: { name: 'stray' },
      })),
      { projection: 'other', position: position(1) },
    );
    const getUser = jest.spyOn(live, 'listCustomers');

    const verified = await rebuilder().verify();

    expect(verified.differences).toBe(count);
    // Three rounds, each reading every difference again; none past 10,000.
    expect(getUser).toHaveBeenCalledTimes(count > 10_000 ? 0 : 3 * count);
  });

  it('throws the scratch copy away, whatever the outcome', async () => {
    const target = new MemoryRebuildTarget(live, CHECKPOINT);
    const discard = jest.spyOn(target, 'discard');
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    const verifier = new ReadModelRebuilder(events, target, ALL_PROJECTIONS, CHECKPOINT);

    await expect(verifier.verify({ signal: controller.signal })).rejects.toThrow('stop');
    expect(discard).toHaveBeenCalledTimes(1);
    await verifier.verify();
    expect(discard).toHaveBeenCalledTimes(2);
  });
});
