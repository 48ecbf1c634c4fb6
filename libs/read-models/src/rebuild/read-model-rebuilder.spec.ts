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
import { MemoryRebuildTarget } from './rebuild-target';

const CHECKPOINT = 'read-models';
const metadata = {
  actor: 'system',
  correlationId: 'c',
  causationId: null,
  occurredAt: '2026-01-01T00:00:00.000Z',
};
const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

describe('ReadModelRebuilder on memory read models', () => {
  let dir: string;
  let events: SqliteEventStore;
  let live: MemoryReadStore;
  let runner: ProjectionProcessor;

  const register = (id: number) =>
    events.append(
      `customer-${id}`,
      [
        {
          id: randomUUID(),
          type: 'CustomerRegistered.v1',
          data: {
            customerId: id,
            name: `C${id}`,
            email: `c${id}@example.com`,
            createdon: metadata.occurredAt,
          },
          metadata,
        },
      ],
      'no_stream',
    );
  const names = async () =>
    (await live.listCustomers({ offset: 0, limit: 100_000 })).items.map((c) => c.name);
  const rebuilder = (projections = ALL_PROJECTIONS) =>
    new ReadModelRebuilder(events, new MemoryRebuildTarget(live, CHECKPOINT), projections, CHECKPOINT);

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chronicle-rebuild-'));
    events = SqliteEventStore.open(dir, { pollIntervalMs: 5 });
    for (let id = 1; id <= 3000; id++) await register(id);
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
    expect(progress.at(-1)).toBe(1);
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
    await runner.waitFor((await events.headPosition())!, 10_000);
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
    await runner.waitFor((await events.headPosition())!, 5000);
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
