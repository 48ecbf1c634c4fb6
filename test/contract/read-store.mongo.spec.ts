import { randomUUID } from 'node:crypto';

import { position, StoreReplacedError } from '@chronicle/event-store';
import { CustomerDocument, DocumentChange, UserDocument } from '@chronicle/read-models';
import { MongoReadStore } from '@chronicle/read-models/mongo';
import { Db, Long, MongoClient } from 'mongodb';

import { CommandError } from '../doubles/mongo/errors';
import { MongoDouble, startMongoDouble } from '../doubles/mongo/mongo-double';
import { describeReadStoreContract } from './read-store.contract';

/** A database of its own per store, dropped afterwards: runs never see each other's data. */
function setupOn(uri: () => string) {
  return async () => {
    const dbName = `chronicle_test_${randomUUID().replaceAll('-', '')}`;
    const store = await MongoReadStore.connect(uri(), { dbName });
    return {
      store,
      cleanup: async () => {
        await store.close();
        const client = await MongoClient.connect(uri());
        try {
          await client.db(dbName).dropDatabase();
        } finally {
          await client.close();
        }
      },
    };
  };
}

describe('MongoReadStore on the wire-protocol double', () => {
  let double: MongoDouble;

  beforeAll(async () => {
    double = await startMongoDouble();
  });

  afterAll(async () => {
    await double.stop();
  });

  describeReadStoreContract(
    'mongo (double)',
    setupOn(() => double.uri),
  );

  describe('replays', () => {
    let store: MongoReadStore;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await setupOn(() => double.uri)());
    });

    afterEach(() => cleanup());

    const customer = (id: number, at: number, set: Partial<CustomerDocument>): DocumentChange => ({
      collection: 'customers',
      id,
      position: position(at),
      set,
    });
    const user = (id: string, at: number, set: Partial<UserDocument>): DocumentChange => ({
      collection: 'users',
      id,
      position: position(at),
      set,
    });
    const batch = [
      customer(1, 1, { id: 1, name: 'One', email: 'one@example.com', createdon: '2026-01-01T00:00:00.000Z' }),
      user('u-1', 2, { name: 'Ada', age: 36, createdon: '2026-01-01T00:00:00.000Z' }),
      customer(2, 3, { name: 'Two', email: 'two@example.com', createdon: '2026-01-02T00:00:00.000Z' }),
      customer(1, 4, { name: 'One renamed' }),
      user('u-1', 5, { age: 37, modifiedon: '2026-01-03T00:00:00.000Z' }),
      customer(1, 6, { email: 'one@new.example.com' }),
      user('u-1', 7, { name: 'Ada L.' }),
    ];

    async function snapshot() {
      return {
        customers: await store.listCustomers({ offset: 0, limit: 100 }),
        user: await store.getUser('u-1'),
        checkpoint: await store.getCheckpoint('main'),
      };
    }

    it('changes nothing when the same batch is applied again', async () => {
      await store.applyBatch(batch, { projection: 'main', position: position(7) });
      const once = await snapshot();
      expect(once.customers.items[0]).toEqual({
        id: 1,
        name: 'One renamed',
        email: 'one@new.example.com',
        createdon: '2026-01-01T00:00:00.000Z',
      });

      await store.applyBatch(batch, { projection: 'main', position: position(7) });
      expect(await snapshot()).toEqual(once);
    });

    it('ends with the same documents after a crash between a batch and its checkpoint', async () => {
      const clean = await snapshotOfCleanRun();

      // The first run got its documents written but died before the checkpoint; the restart
      // resumes from the checkpoint before, so it applies the whole batch again, and more.
      await store.applyBatch([], { projection: 'main', position: position(0) });
      await store.applyBatch(batch, { projection: 'other', position: position(7) });
      expect(await store.getCheckpoint('main')).toEqual(position(0));
      await store.applyBatch(batch.slice(0, 3), { projection: 'main', position: position(3) });
      await store.applyBatch(batch.slice(3), { projection: 'main', position: position(7) });

      expect(await snapshot()).toEqual(clean);
    });

    it('completes a document whose changes were only partly applied before a crash', async () => {
      const clean = await snapshotOfCleanRun();
      // Only the first changes of each document made it: the documents sit inside the batch.
      await store.applyBatch(batch.slice(0, 4), { projection: 'other', position: position(4) });

      await store.applyBatch(batch, { projection: 'main', position: position(7) });

      expect(await snapshot()).toEqual(clean);
    });

    async function snapshotOfCleanRun() {
      const { store: reference, cleanup: dropReference } = await setupOn(() => double.uri)();
      try {
        await reference.applyBatch(batch, { projection: 'main', position: position(7) });
        return {
          customers: await reference.listCustomers({ offset: 0, limit: 100 }),
          user: await reference.getUser('u-1'),
          checkpoint: await reference.getCheckpoint('main'),
        };
      } finally {
        await dropReference();
      }
    }
  });
});

describe('MongoReadStore configuration', () => {
  let double: MongoDouble;
  const seen: Array<{ db: string; command: Record<string, any> }> = [];

  beforeAll(async () => {
    double = await startMongoDouble({ onCommand: (db, command) => seen.push({ db, command }) });
  });

  afterAll(() => double.stop());

  const sent = (name: string) => seen.filter((entry) => Object.keys(entry.command)[0] === name);
  const batch = [{ collection: 'customers' as const, id: 1, position: position(1), set: { name: 'One' } }];

  it('creates its collections at start-up in the database the URI names', async () => {
    const store = await MongoReadStore.connect(double.uri.replace('/?', '/from_uri?'));
    await store.close();
    const client = await MongoClient.connect(double.uri);
    try {
      const names = await client.db('from_uri').listCollections({}, { nameOnly: true }).toArray();
      expect(names.map((info) => info.name).sort()).toEqual(['checkpoints', 'customers', 'users']);
    } finally {
      await client.close();
    }
  });

  it('writes with majority write concern and reads with majority read concern by default', async () => {
    seen.length = 0;
    const store = await MongoReadStore.connect(double.uri, { dbName: 'concerns_default' });
    await store.applyBatch(batch, { projection: 'main', position: position(1) });
    await store.listCustomers({ offset: 0, limit: 10 });
    await store.close();
    // The generation marker at connect, the batch's documents, its checkpoint.
    expect(sent('update').map((entry) => entry.command.writeConcern)).toEqual([
      { w: 'majority' },
      { w: 'majority' },
      { w: 'majority' },
    ]);
    expect(sent('find')[0].command.readConcern).toEqual({ level: 'majority' });
    expect(sent('aggregate')[0].command.readConcern).toEqual({ level: 'majority' });
  });

  it('takes the concerns it is given', async () => {
    seen.length = 0;
    const store = await MongoReadStore.connect(double.uri, {
      dbName: 'concerns_given',
      writeConcern: { w: 1, journal: true },
      readConcern: 'local',
    });
    await store.applyBatch(batch, { projection: 'main', position: position(1) });
    await store.getUser('u-1');
    await store.close();
    const writeConcern = sent('update')[0].command.writeConcern;
    expect([Number(writeConcern.w), writeConcern.j]).toEqual([1, true]);
    expect(sent('find')[0].command.readConcern).toEqual({ level: 'local' });
  });

  it('does not swallow a duplicate key on any index but _id', async () => {
    const store = await MongoReadStore.connect(double.uri, { dbName: 'other_unique_index' });
    const client = await MongoClient.connect(double.uri);
    try {
      await client
        .db('other_unique_index')
        .collection('customers')
        .createIndex({ email: 1 }, { unique: true });
      const taken = { email: 'taken@example.com' };
      await store.applyBatch([{ collection: 'customers', id: 1, position: position(1), set: taken }], {
        projection: 'main',
        position: position(1),
      });
      await expect(
        store.applyBatch([{ collection: 'customers', id: 2, position: position(2), set: taken }], {
          projection: 'main',
          position: position(2),
        }),
      ).rejects.toMatchObject({ code: 11000 });
      expect(await store.getCheckpoint('main')).toEqual(position(1));
    } finally {
      await client.close();
      await store.close();
    }
  });

  it('refuses a bad batch before writing anything', async () => {
    const store = await MongoReadStore.connect(double.uri, { dbName: 'bad_batch' });
    try {
      const good = { collection: 'customers' as const, id: 1, position: position(1), set: { name: 'One' } };
      const bad = { collection: 'customers' as const, id: 1.5, position: position(2), set: { name: 'Half' } };
      await expect(
        store.applyBatch([good, bad], { projection: 'main', position: position(2) }),
      ).rejects.toThrow(RangeError);
      expect(await store.listCustomers({ offset: 0, limit: 10 })).toEqual({ items: [], total: 0 });
      expect(await store.getCheckpoint('main')).toBeNull();
    } finally {
      await store.close();
    }
  });

  /** A store on its own database, and a plain client to read what it wrote there. */
  async function withStore(dbName: string, test: (store: MongoReadStore, db: Db) => Promise<void>) {
    const store = await MongoReadStore.connect(double.uri, { dbName });
    const client = await MongoClient.connect(double.uri);
    try {
      await test(store, client.db(dbName));
    } finally {
      await client.close();
      await store.close();
    }
  }

  it('stores customer ids beyond int32 as integers', async () => {
    await withStore('big_ids', async (store, db) => {
      const id = 2 ** 40 + 1;
      await store.applyBatch([{ collection: 'customers', id, position: position(1), set: { name: 'Big' } }], {
        projection: 'main',
        position: position(1),
      });
      const raw = await db.collection('customers').findOne({}, { promoteLongs: false });
      expect(raw?._id).toBeInstanceOf(Long);
      expect((await store.listCustomers({ gt: 2 ** 40, offset: 0, limit: 10 })).items).toEqual([
        { id, name: 'Big' },
      ]);
    });
  });

  it('stores customer ids as int32 up to its bounds and as int64 beyond them, never as doubles', async () => {
    await withStore('id_bounds', async (store, db) => {
      const ids = [2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1];
      await store.applyBatch(
        ids.map((id, i) => ({
          collection: 'customers',
          id,
          position: position(i + 1),
          set: { name: `c${i}` },
        })),
        { projection: 'main', position: position(ids.length) },
      );
      const raw = await db.collection('customers').find({}, { promoteValues: false }).toArray();
      const typeOf = (name: string) =>
        (raw.find((doc) => doc.name?.toString() === name)?._id as { _bsontype?: string })?._bsontype;
      expect(ids.map((_, i) => typeOf(`c${i}`))).toEqual(['Int32', 'Long', 'Int32', 'Long']);
    });
  });

  it('keeps neither the id nor a value left undefined as a field of the document', async () => {
    await withStore('fields_set', async (store, db) => {
      const set = (at: number, fields: Partial<CustomerDocument>): DocumentChange => ({
        collection: 'customers',
        id: 7,
        position: position(at),
        set: { id: 7, ...fields },
      });
      await store.applyBatch([set(1, { name: 'Ada', email: 'a@example.com' })], {
        projection: 'main',
        position: position(1),
      });
      await store.applyBatch([set(2, { name: undefined, email: 'b@example.com' })], {
        projection: 'main',
        position: position(2),
      });
      const raw = await db.collection('customers').findOne({ _id: 7 as never });
      expect(raw).not.toHaveProperty('id');
      expect(raw).toMatchObject({ name: 'Ada', email: 'b@example.com' });
    });
  });
});

describe('MongoReadStore: what it reads, the errors it meets, and its life', () => {
  let double: MongoDouble;
  let client: MongoClient;
  let dbName: string;
  const stores: MongoReadStore[] = [];
  const open = async (options: { collectionPrefix?: string } = {}) => {
    const store = await MongoReadStore.connect(double.uri, { dbName, ...options });
    stores.push(store);
    return store;
  };
  const db = () => client.db(dbName);
  const customer = (id: number, at: number, name = `c${id}`): DocumentChange => ({
    collection: 'customers',
    id,
    position: position(at),
    set: { id, name },
  });
  const checkpoint = (at: number) => ({ projection: 'main', position: position(at) });
  const collectionNames = async () =>
    (await db().listCollections({}, { nameOnly: true }).toArray()).map((info) => info.name).sort();
  /** A command on one of this test's collections (a getMore names its cursor first). */
  const on = (name: string, collection?: string) => (database: string, command: Record<string, any>) =>
    database === dbName &&
    name in command &&
    (collection === undefined || (name === 'getMore' ? command.collection : command[name]) === collection);
  const killed = (code: 43 | 175 | 237 = 43) =>
    new CommandError(
      code,
      { 43: 'CursorNotFound', 175: 'QueryPlanKilled', 237: 'CursorKilled' }[code],
      'cursor killed',
    );
  const unauthorized = () => new CommandError(13, 'Unauthorized', 'not authorized on this database');

  beforeAll(async () => {
    double = await startMongoDouble();
    client = await MongoClient.connect(double.uri);
  });
  beforeEach(() => {
    dbName = `life_${randomUUID().slice(0, 8)}`;
  });
  afterEach(async () => {
    await Promise.allSettled(stores.splice(0).map((store) => store.close()));
    // Every fault a test planned was met: none passed for want of its command, none is left over.
    expect(double.clearFaults()).toBe(0);
  });
  afterAll(async () => {
    await client.close();
    await double.stop();
  });

  it('uses the chronicle database when neither the URI nor the options name one', async () => {
    const store = await MongoReadStore.connect(double.uri);
    stores.push(store);
    await store.applyBatch([customer(1, 1)], checkpoint(1));
    expect(await client.db('chronicle').collection('customers').countDocuments()).toBe(1);
    await client.db('chronicle').dropDatabase();
  });

  it('writes no batch into a database wiped under it until its checkpoint is read again', async () => {
    const store = await open();
    await store.applyBatch([customer(1, 1)], checkpoint(1));
    await db().dropDatabase();

    await expect(store.applyBatch([customer(2, 2)], checkpoint(2))).rejects.toThrow(
      new StoreReplacedError(
        'The MongoDB read models were wiped or replaced since their checkpoint was read: reading it again',
      ),
    );
    // Still refused: the wiped database has no generation, but neither has the store any longer.
    await expect(store.applyBatch([customer(2, 2)], checkpoint(2))).rejects.toThrow(StoreReplacedError);
    expect(await db().collection('customers').countDocuments()).toBe(0);

    // Reading the checkpoint (none now, so a projector starts from the beginning) adopts a new one.
    expect(await store.getCheckpoint('main')).toBeNull();
    await store.applyBatch([customer(1, 1)], checkpoint(1));
    expect(await store.getCheckpoint('main')).toEqual(position(1));
  });

  it('refuses a checkpoint that is not a position, naming it', async () => {
    const store = await open();
    await expect(
      store.applyBatch([], { projection: 'main', position: { commit: -1n, prepare: 0n } }),
    ).rejects.toThrow(new RangeError('checkpoint position must be two unsigned 64-bit integers'));
  });

  it('lists an empty page for a limit of 0, with the total', async () => {
    const store = await open();
    await store.applyBatch([customer(1, 1), customer(2, 2)], checkpoint(2));
    expect(await store.listCustomers({ offset: 0, limit: 0 })).toEqual({ items: [], total: 2 });
  });

  it('writes every document of a batch when some of them refuse the merged write', async () => {
    const store = await open();
    await store.applyBatch([customer(1, 5, 'newer')], checkpoint(5));
    // Customer 1 already holds a later change, so its merged write is refused; customer 2's is not.
    await store.applyBatch([customer(1, 3, 'older'), customer(2, 6, 'two')], checkpoint(6));
    expect((await store.listCustomers({ offset: 0, limit: 10 })).items).toEqual([
      { id: 1, name: 'newer' },
      { id: 2, name: 'two' },
    ]);
  });

  it('reads each collection’s documents, in id order, with only the fields they hold', async () => {
    const store = await open();
    await store.applyBatch([customer(3, 1), customer(1, 2)], checkpoint(2));
    await store.applyBatch([customer(2, 3)], checkpoint(3));
    const user = { id: 'u-1', name: 'Ada', createdon: '2026-01-01T00:00:00.000Z' };
    await store.applyBatch(
      [{ collection: 'users', id: 'u-1', position: position(4), set: user }],
      checkpoint(4),
    );

    const read = async <C extends 'customers' | 'users'>(collection: C) => {
      const documents = [];
      for await (const document of store.documents(collection)) documents.push(document);
      return documents;
    };
    expect((await read('customers')).map((document) => document.id)).toEqual([1, 2, 3]);
    // Exactly the fields set: none present as undefined.
    expect(await read('users')).toStrictEqual([user]);
    expect(await store.getUser('u-1')).toStrictEqual(user);
  });

  describe('a cursor the server kills', () => {
    it('reads a page again once, and only for a killed cursor', async () => {
      const store = await open();
      await store.applyBatch([customer(1, 1)], checkpoint(1));
      const page = { items: [{ id: 1, name: 'c1' }], total: 1 };

      double.failCommands(1, on('find', 'customers'), killed());
      expect(await store.listCustomers({ offset: 0, limit: 10 })).toEqual(page);
      double.failCommands(1, on('find', 'users'), killed(237));
      expect(await store.getUser('u-1')).toBeNull();

      double.failCommands(2, on('find', 'customers'), killed());
      await expect(store.listCustomers({ offset: 0, limit: 10 })).rejects.toMatchObject({ code: 43 });
      double.failCommands(1, on('find', 'customers'), unauthorized());
      await expect(store.listCustomers({ offset: 0, limit: 10 })).rejects.toMatchObject({ code: 13 });
    });

    it('goes on with a scan after the last document it read, once, and only for a killed cursor', async () => {
      const store = await open();
      // More than the first batch (101 documents), so that the scan needs a getMore.
      await store.applyBatch(
        Array.from({ length: 150 }, (_, i) => customer(i + 1, i + 1)),
        checkpoint(150),
      );
      const ids = async () => {
        const read: number[] = [];
        for await (const document of store.documents('customers')) read.push(document.id);
        return read;
      };
      const all = Array.from({ length: 150 }, (_, i) => i + 1);

      double.failCommands(1, on('getMore', 'customers'), killed(175));
      expect(await ids()).toEqual(all);

      // Killed again, in the find that reopens the scan (the one with a lower bound).
      double.failCommands(1, on('getMore', 'customers'), killed(175));
      double.failCommands(
        1,
        (database, command) =>
          on('find', 'customers')(database, command) && command.filter?._id !== undefined,
        killed(),
      );
      await expect(ids()).rejects.toMatchObject({ code: 43 });

      double.failCommands(1, on('getMore', 'customers'), unauthorized());
      await expect(ids()).rejects.toMatchObject({ code: 13 });
    });
  });

  describe('its collections', () => {
    it('takes a collection another process created first, and fails on any other refusal', async () => {
      double.failCommands(1, on('create', 'customers'), new CommandError(48, 'NamespaceExists', 'exists'));
      const store = await open();
      await store.applyBatch([customer(1, 1)], checkpoint(1));
      expect((await store.listCustomers({ offset: 0, limit: 10 })).total).toBe(1);

      dbName = `life_${randomUUID().slice(0, 8)}`;
      double.failCommands(1, on('create', 'users'), unauthorized());
      await expect(open()).rejects.toMatchObject({ code: 13 });
    });

    it('promotes and drops only a prefixed generation', async () => {
      const live = await open();
      const refusal = new Error('Only a prefixed generation can be promoted or dropped');
      await expect(live.promote()).rejects.toThrow(refusal);
      await expect(live.drop()).rejects.toThrow(refusal);
      expect(await collectionNames()).toEqual(['checkpoints', 'customers', 'users']);
    });

    it('drops all of its own collections and none of the live ones, then is closed', async () => {
      await open();
      const scratch = await open({ collectionPrefix: 'scratch_' });
      await scratch.applyBatch([customer(1, 1)], checkpoint(1));
      await scratch.drop();
      expect(await collectionNames()).toEqual(['checkpoints', 'customers', 'users']);
      await expect(scratch.listCustomers({ offset: 0, limit: 1 })).rejects.toThrow(
        'The read store is closed',
      );
    });

    it('drops a generation even when one of its collections is already gone, and fails on any other refusal', async () => {
      const scratch = await open({ collectionPrefix: 'scratch_' });
      double.failCommands(
        1,
        on('drop', 'scratch_users'),
        new CommandError(26, 'NamespaceNotFound', 'ns not found'),
      );
      await scratch.drop();
      expect(await collectionNames()).toEqual(['scratch_users']);

      const other = await open({ collectionPrefix: 'other_' });
      double.failCommands(1, on('drop', 'other_users'), unauthorized());
      await expect(other.drop()).rejects.toMatchObject({ code: 13 });
    });
  });

  it('refuses everything once closed, but a drop, which has nothing left to do', async () => {
    const store = await open();
    await store.close();
    const closed = new Error('The read store is closed');
    await expect(store.ping()).rejects.toThrow(closed);
    await expect(store.applyBatch([customer(1, 1)], checkpoint(1))).rejects.toThrow(closed);
    await expect(store.getCheckpoint('main')).rejects.toThrow(closed);
    await expect(store.listCustomers({ offset: 0, limit: 1 })).rejects.toThrow(closed);
    await expect(store.listUsers({ offset: 0, limit: 1 })).rejects.toThrow(closed);
    await expect(store.getUser('u-1')).rejects.toThrow(closed);
    await expect(store.documents('users').next()).rejects.toThrow(closed);
    await expect(store.drop()).resolves.toBeUndefined();
  });

  it('answers a ping while open', async () => {
    const store = await open();
    await expect(store.ping()).resolves.toBeUndefined();
  });
});

const realUri = process.env.MONGODB_URI;
(realUri ? describe : describe.skip)('MongoReadStore on a real MongoDB (set MONGODB_URI to run)', () => {
  describeReadStoreContract(
    'mongo (real server)',
    setupOn(() => realUri!),
  );
});
