import { randomUUID } from 'node:crypto';
import { Document } from 'bson';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { position, SqliteEventStore } from '@chronicle/event-store';
import {
  ALL_PROJECTIONS,
  CustomerDocument,
  DocumentChange,
  READ_MODELS_CHECKPOINT,
  ReadModelRebuilder,
} from '@chronicle/read-models';
import { MongoReadStore, MongoRebuildTarget } from '@chronicle/read-models/mongo';
import { MongoClient } from 'mongodb';
import { CommandError } from '../doubles/mongo/errors';
import { MongoDouble, startMongoDouble } from '../doubles/mongo/mongo-double';

// The rebuild's swap on MongoDB (issue 18): a promotion interrupted at any step is finished by the
// next connect, the live collections' indexes survive it, and readers whose cursor the rename
// killed read again. The double kills cursors on dropped and renamed collections as a server does.

const customer = (id: number, name: string): DocumentChange => ({
  collection: 'customers',
  id,
  position: position(id),
  set: { id, name, email: `${name.toLowerCase()}@example.com`, createdon: '2026-01-01T00:00:00.000Z' },
});

const user = (id: string, name: string): DocumentChange => ({
  collection: 'users',
  id,
  position: position(100),
  set: { id, name, age: 30, createdon: '2026-01-01T00:00:00.000Z', modifiedon: '2026-01-01T00:00:00.000Z' },
});

describe('MongoDB rebuild swap on the wire-protocol double', () => {
  let double: MongoDouble;
  /** Throws (so the double drops the connection, as a dying process would) on the n-th matching command. */
  let crashOn: ((db: string, command: Document) => boolean) | null = null;
  let client: MongoClient;
  let dbName: string;
  const stores: MongoReadStore[] = [];

  beforeAll(async () => {
    double = await startMongoDouble({
      onCommand: (db, command) => {
        if (crashOn?.(db, command)) {
          crashOn = null;
          throw new Error('crash');
        }
      },
    });
    client = await MongoClient.connect(double.uri);
  });
  afterAll(async () => {
    await client.close();
    await double.stop();
  });
  beforeEach(() => {
    dbName = `swap_${randomUUID().slice(0, 8)}`;
  });
  afterEach(async () => {
    crashOn = null;
    await Promise.allSettled(stores.splice(0).map((store) => store.close()));
    expect(double.clearFaults()).toBe(0);
  });

  async function open(collectionPrefix?: string): Promise<MongoReadStore> {
    const store = await MongoReadStore.connect(double.uri, { dbName, collectionPrefix });
    stores.push(store);
    return store;
  }

  /** A live generation with a name index an operator added, and a rebuilt one beside it. */
  async function liveAndRebuilt(): Promise<{ live: MongoReadStore; rebuilt: MongoReadStore }> {
    const live = await open();
    await live.applyBatch([customer(1, 'Old'), user('u-1', 'Old')], {
      projection: 'p',
      position: position(100),
    });
    await client.db(dbName).collection('customers').createIndex({ name: 1 }, { name: 'by_name' });
    const rebuilt = await open('rebuild_x_');
    await rebuilt.applyBatch([customer(1, 'New'), customer(2, 'New'), user('u-1', 'New')], {
      projection: 'p',
      position: position(100),
    });
    return { live, rebuilt };
  }

  const renaming = (suffix: string) => (_db: string, command: Document) =>
    String(command.renameCollection ?? '') === `${dbName}${suffix}`;

  async function names(store: MongoReadStore): Promise<string[]> {
    const page = await store.listCustomers({ offset: 0, limit: 10 });
    const user = await store.getUser('u-1');
    return [...page.items.map((c: CustomerDocument) => c.name), user?.name ?? 'none'];
  }

  async function collections(): Promise<string[]> {
    return (await client.db(dbName).listCollections({}, { nameOnly: true }).toArray())
      .map((c) => c.name)
      .sort();
  }

  it('swaps both collections in, keeping the live indexes, and leaves nothing behind', async () => {
    const { live, rebuilt } = await liveAndRebuilt();

    await rebuilt.promote();

    expect(await names(live)).toEqual(['New', 'New', 'New']);
    const indexes = await client.db(dbName).collection('customers').indexes();
    expect(indexes.map((index) => index.name).sort()).toEqual(['_id_', 'by_name']);
    expect(await collections()).toEqual(['checkpoints', 'customers', 'promotions', 'users']);
    expect(await client.db(dbName).collection('promotions').countDocuments()).toBe(0);
  });

  it.each([
    ['writing the journal', (c: Document) => 'update' in c && c.update === 'promotions', ['Old', 'Old']],
    ['copying the indexes', (c: Document) => 'createIndexes' in c, ['New', 'New', 'New']],
    [
      'renaming customers',
      (c: Document) => String(c.renameCollection ?? '').endsWith('.rebuild_x_customers'),
      ['New', 'New', 'New'],
    ],
    [
      'renaming users',
      (c: Document) => String(c.renameCollection ?? '').endsWith('.rebuild_x_users'),
      ['New', 'New', 'New'],
    ],
    ['dropping the checkpoints', (c: Document) => c.drop === 'rebuild_x_checkpoints', ['New', 'New', 'New']],
    [
      'clearing the journal',
      (c: Document) => 'delete' in c && c.delete === 'promotions',
      ['New', 'New', 'New'],
    ],
  ])('finishes a promotion interrupted at %s on the next connect', async (_, step, after) => {
    const { rebuilt } = await liveAndRebuilt();
    crashOn = (_db, command) => step(command);

    await expect(rebuilt.promote()).rejects.toThrow();
    const reopened = await open();

    // Interrupted before its journal was written, the promotion never began: the old models stay whole.
    expect(await names(reopened)).toEqual(after);
    const indexes = await client.db(dbName).collection('customers').indexes();
    expect(indexes.map((index) => index.name).sort()).toEqual(['_id_', 'by_name']);
    expect(await client.db(dbName).collection('promotions').countDocuments()).toBe(0);
  });

  it('reads again when a rename kills a reader’s cursor', async () => {
    const { live, rebuilt } = await liveAndRebuilt();
    await live.applyBatch(
      Array.from({ length: 300 }, (_, i) => customer(10 + i, `Old ${i}`)),
      { projection: 'p', position: position(400) },
    );
    await rebuilt.applyBatch([customer(500, 'New')], { projection: 'p', position: position(500) });
    const scan = live.documents('customers')[Symbol.asyncIterator]();
    const first = await scan.next();

    // The first batch is in hand; the rename kills the cursor the next batch would come from.
    await rebuilt.promote();
    const rest: number[] = [];
    for (let next = await scan.next(); !next.done; next = await scan.next()) rest.push(next.value.id);

    // The rest of the first batch (ids 10 to 109), then the new collection after the last id read.
    expect(first.value).toMatchObject({ id: 1, name: 'Old' });
    expect(rest).toEqual([...Array.from({ length: 100 }, (_, i) => 10 + i), 500]);
  });

  it('does nothing when asked to discard a generation it already promoted', async () => {
    const { rebuilt } = await liveAndRebuilt();
    await rebuilt.promote();
    await rebuilt.close();

    await expect(rebuilt.drop()).resolves.toBeUndefined();
    expect(await collections()).toEqual(['checkpoints', 'customers', 'promotions', 'users']);
  });

  it('promotes only the collections it is asked to, dropping the generation’s others', async () => {
    const { live, rebuilt } = await liveAndRebuilt();

    await rebuilt.promote(['customers']);

    expect(await names(live)).toEqual(['New', 'New', 'Old']);
    expect(await collections()).toEqual(['checkpoints', 'customers', 'promotions', 'users']);
  });

  it('promotes a generation into a database that has no live collections yet', async () => {
    const rebuilt = await open('rebuild_x_');
    await rebuilt.applyBatch([customer(1, 'New'), user('u-1', 'New')], {
      projection: 'p',
      position: position(100),
    });

    await rebuilt.promote();

    expect(await names(await open())).toEqual(['New', 'New']);
  });

  it('keeps the journal when a rename is refused, for the next connect to finish', async () => {
    const { rebuilt } = await liveAndRebuilt();
    double.failCommands(
      1,
      renaming('.rebuild_x_customers'),
      new CommandError(13, 'Unauthorized', 'not authorized'),
    );
    await expect(rebuilt.promote()).rejects.toMatchObject({ code: 13 });
    expect(await client.db(dbName).collection('promotions').countDocuments()).toBe(1);

    expect(await names(await open())).toEqual(['New', 'New', 'New']);
    expect(await client.db(dbName).collection('promotions').countDocuments()).toBe(0);
  });

  it('goes on past a rename another process finishing the same promotion did first', async () => {
    const { live, rebuilt } = await liveAndRebuilt();
    // What the server answers when the source is gone, renamed by the other process. (The double,
    // answering so, renames nothing, so only what the store does after it is checked.)
    double.failCommands(
      1,
      renaming('.rebuild_x_users'),
      new CommandError(26, 'NamespaceNotFound', 'source not found'),
    );
    await rebuilt.promote();
    expect((await names(live)).slice(0, 2)).toEqual(['New', 'New']);
    expect(await client.db(dbName).collection('promotions').countDocuments()).toBe(0);
    expect(await collections()).not.toContain('rebuild_x_checkpoints');
  });

  it('leaves a pending promotion to the live store: a generation that connects does not finish it', async () => {
    const { rebuilt } = await liveAndRebuilt();
    crashOn = renaming('.rebuild_x_customers');
    await expect(rebuilt.promote()).rejects.toThrow();

    await open('rebuild_y_');
    expect(await client.db(dbName).collection('promotions').countDocuments()).toBe(1);
    const reopened = await open();
    expect(await names(reopened)).toEqual(['New', 'New', 'New']);
  });

  it('rebuilds after the event store was wiped, moving the projector’s checkpoint back into the log', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chronicle-swap-'));
    const events = SqliteEventStore.open(dir);
    try {
      const live = await open();
      // The checkpoint of a projector that followed a longer log, now gone.
      await live.applyBatch([customer(1, 'Gone')], {
        projection: READ_MODELS_CHECKPOINT,
        position: position(50),
      });
      await events.append(
        'customer-7',
        [
          {
            id: randomUUID(),
            type: 'CustomerRegistered.v1',
            data: {
              customerId: 7,
              name: 'Seven',
              email: 's@example.com',
              createdon: '2026-01-01T00:00:00.000Z',
            },
            metadata: {
              actor: 'system',
              correlationId: 'c',
              causationId: null,
              occurredAt: '2026-01-01T00:00:00.000Z',
            },
          },
        ],
        'no_stream',
      );
      const rebuilder = new ReadModelRebuilder(
        events,
        new MongoRebuildTarget(live, double.uri, dbName),
        ALL_PROJECTIONS,
        READ_MODELS_CHECKPOINT,
      );

      await rebuilder.rebuild();

      expect(await live.getCheckpoint(READ_MODELS_CHECKPOINT)).toEqual(await events.endPosition());
      expect((await live.listCustomers({ offset: 0, limit: 10 })).items.map((c) => c.name)).toEqual([
        'Seven',
      ]);
    } finally {
      await events.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
