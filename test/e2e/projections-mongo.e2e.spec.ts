import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { position, SqliteCheckpointStore, SqliteEventStore } from '@chronicle/event-store';
import {
  ALL_PROJECTIONS,
  ProjectionProcessor,
  READ_MODELS_CHECKPOINT,
  ReadModelRebuilder,
} from '@chronicle/read-models';
import { MongoReadStore, MongoRebuildTarget } from '@chronicle/read-models/mongo';
import { MongoClient } from 'mongodb';
import { MongoDouble, startMongoDouble } from '../doubles/mongo/mongo-double';
import { reaches } from '../../libs/read-models/src/projection-processor.spec-helper';

const metadata = {
  actor: 'system',
  correlationId: 'c',
  causationId: null,
  occurredAt: '2026-01-01T00:00:00.000Z',
};
const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** Rebuild and verify on MongoDB read models (the wire double), with a live projector running. */
describe('projections rebuild and verify on MongoDB', () => {
  let double: MongoDouble;
  let dir: string;
  let events: SqliteEventStore;
  let live: MongoReadStore;
  let runner: ProjectionProcessor;
  let dbName: string;
  let uri: string;

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
  const rebuilder = () =>
    new ReadModelRebuilder(
      events,
      new MongoRebuildTarget(live, uri, dbName),
      ALL_PROJECTIONS,
      READ_MODELS_CHECKPOINT,
    );
  const collections = async () => {
    const client = await MongoClient.connect(uri);
    try {
      return (await client.db(dbName).listCollections({}, { nameOnly: true }).toArray())
        .map((c) => c.name)
        .sort();
    } finally {
      await client.close();
    }
  };

  beforeAll(async () => {
    double = await startMongoDouble();
    uri = double.uri;
  });
  afterAll(() => double.stop());

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chronicle-rebuild-mongo-'));
    events = SqliteEventStore.open(dir, { pollIntervalMs: 5 });
    for (let id = 1; id <= 500; id++) await register(id);
    dbName = `chronicle_rebuild_${randomUUID().replaceAll('-', '')}`;
    live = await MongoReadStore.connect(uri, { dbName });
    runner = new ProjectionProcessor(events, live, ALL_PROJECTIONS, {
      checkpointName: READ_MODELS_CHECKPOINT,
      parking: SqliteCheckpointStore.open(':memory:'),
      logger: silent,
    });
    await runner.start();
  });

  afterEach(async () => {
    await runner.stop();
    await live.close();
    await events.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('replays from the start into read models wiped under it, rather than writing its position into them', async () => {
    const client = await MongoClient.connect(uri);
    try {
      await client.db(dbName).dropDatabase();
    } finally {
      await client.close();
    }
    await register(501);
    let total = 0;
    for (const deadline = Date.now() + 10_000; total !== 501 && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      total = (await live.listCustomers({ offset: 0, limit: 0 })).total;
    }
    expect(total).toBe(501);
    expect(await live.getCheckpoint(READ_MODELS_CHECKPOINT)).toEqual(await events.headPosition());
  });

  it('builds new collections and renames them over the live ones, losing no event written meanwhile', async () => {
    let written = 0;
    let writing = true;
    const writer = (async () => {
      while (writing || written < 20) await register(1000 + written++);
    })();
    const result = await rebuilder().rebuild();
    writing = false;
    await writer;
    expect(result.events).toBeGreaterThanOrEqual(500);
    expect(await reaches(runner, (await events.headPosition())!, 10_000)).toBe(true);
    expect((await live.listCustomers({ offset: 0, limit: 0 })).total).toBe(500 + written);
    // `promotions` is the swap's journal, empty once the swap is done.
    expect(await collections()).toEqual(['checkpoints', 'customers', 'promotions', 'users']);
    expect(await rebuilder().verify()).toMatchObject({ differences: 0 });
  });

  it('rebuilds one projection: its collection is renamed over the live one, the others stay', async () => {
    await live.applyBatch(
      [
        { collection: 'customers', id: 999_999, position: position(1), set: { name: 'stray' } },
        { collection: 'users', id: 'u-stray', position: position(1), set: { name: 'stray' } },
      ],
      { projection: 'stray-test', position: position(1) },
    );
    const checkpoint = await live.getCheckpoint(READ_MODELS_CHECKPOINT);

    const result = await rebuilder().rebuild({ projection: 'customers' });

    expect(result.events).toBeGreaterThanOrEqual(500);
    expect((await live.listCustomers({ gt: 999_998, offset: 0, limit: 1 })).items).toEqual([]);
    expect(await live.getUser('u-stray')).toMatchObject({ name: 'stray' });
    expect(await live.getCheckpoint(READ_MODELS_CHECKPOINT)).toEqual(checkpoint);
    // The generation's users collection was dropped, not left behind.
    expect(await collections()).toEqual(['checkpoints', 'customers', 'promotions', 'users']);
  });

  it('verify finds a corrupted document and drops its scratch collections', async () => {
    const far = position(2n ** 62n);
    await live.applyBatch(
      [{ collection: 'customers', id: 3, position: far, set: { email: 'evil@example.com' } }],
      {
        projection: 'corruption',
        position: far,
      },
    );
    const report = await rebuilder().verify();
    expect(report.differences).toBe(1);
    expect(report.first[0]).toMatchObject({
      collection: 'customers',
      id: 3,
      live: { email: 'evil@example.com' },
      rebuilt: { email: 'c3@example.com' },
    });
    expect(await collections()).toEqual(['checkpoints', 'customers', 'users']);
  });

  it('an interrupted rebuild leaves the live collections and drops its own', async () => {
    const controller = new AbortController();
    const before = await live.listCustomers({ offset: 0, limit: 1000 });
    await expect(
      rebuilder().rebuild({
        signal: controller.signal,
        onProgress: () => controller.abort(new Error('stop')),
      }),
    ).rejects.toThrow('stop');
    expect(await live.listCustomers({ offset: 0, limit: 1000 })).toEqual(before);
    expect(await collections()).toEqual(['checkpoints', 'customers', 'users']);
  });
});
