import { Double, Int32, Long, MongoBulkWriteError, MongoClient, MongoServerError, ObjectId } from 'mongodb';

import { Collection } from './collection';
import { CommandError } from './errors';
import { MongoDouble, startMongoDouble } from './mongo-double';

describe('MongoDB wire-protocol double, through the mongodb driver', () => {
  let double: MongoDouble;
  let client: MongoClient;
  const commands: string[] = [];
  let dbCounter = 0;
  const freshDb = () => client.db(`double_test_${++dbCounter}`);

  beforeAll(async () => {
    double = await startMongoDouble();
    client = new MongoClient(double.uri, { monitorCommands: true });
    client.on('commandStarted', (event) => commands.push(event.commandName));
    await client.connect();
  });

  afterAll(async () => {
    await client.close();
    await double.stop();
  });

  it('answers the handshake and ping as a standalone server', async () => {
    await expect(client.db('admin').command({ ping: 1 })).resolves.toMatchObject({ ok: 1 });
    const info = await client.db('admin').command({ buildInfo: 1 });
    expect(info.version).toBe('7.0.0');
  });

  it('answers an unknown command with CommandNotFound naming it', async () => {
    await expect(client.db('admin').command({ frobnicate: 1 })).rejects.toMatchObject({
      code: 59,
      message: expect.stringContaining('frobnicate'),
    });
  });

  describe('_id round trips', () => {
    it('keeps int32, int64, double and string ids with their exact BSON types', async () => {
      const items = freshDb().collection('items');
      const big = Long.fromString('9007199254740993'); // 2^53 + 1: not representable as a double
      await items.insertMany([
        { _id: new Int32(7), kind: 'int32' },
        { _id: big, kind: 'int64' },
        { _id: new Double(2.5), kind: 'double' },
        { _id: new Double(3), kind: 'integral double' },
        { _id: '0b9e6c1e-8a3f-4a51-9d0e-3f3c2b6c1a00', kind: 'string' },
      ] as any[]);

      const raw = await items.find({}, { promoteValues: false, promoteLongs: false }).toArray();
      const byKind = Object.fromEntries(raw.map((doc) => [doc.kind, doc._id]));
      expect(byKind.int32).toBeInstanceOf(Int32);
      expect(byKind.int32.value).toBe(7);
      expect(byKind.int64).toBeInstanceOf(Long);
      expect(byKind.int64.toString()).toBe('9007199254740993');
      expect(byKind.double).toBeInstanceOf(Double);
      expect(byKind['integral double']).toBeInstanceOf(Double);
      expect(byKind['integral double'].value).toBe(3);
      expect(byKind.string).toBe('0b9e6c1e-8a3f-4a51-9d0e-3f3c2b6c1a00');

      const exact = await items.findOne({ kind: 'int64' }, { useBigInt64: true });
      expect(exact?._id).toBe(9007199254740993n);
    });

    it('finds documents by id and compares numbers across types, as MongoDB does', async () => {
      const items = freshDb().collection<any>('items');
      await items.insertOne({ _id: 42, name: 'int' });
      await items.insertOne({ _id: 'abc', name: 'string' });
      expect(await items.findOne({ _id: 42 })).toEqual({ _id: 42, name: 'int' });
      expect(await items.findOne({ _id: new Double(42) })).toEqual({ _id: 42, name: 'int' });
      expect(await items.findOne({ _id: Long.fromNumber(42) })).toEqual({ _id: 42, name: 'int' });
      expect(await items.findOne({ _id: '42' })).toBeNull();
      expect(await items.findOne({ _id: 'abc' })).toEqual({ _id: 'abc', name: 'string' });
    });

    it('looks an _id equality or $in up as its index does, without reading the other documents', async () => {
      const items = freshDb().collection<any>('items');
      await items.insertMany([
        { _id: 1, pos: 'a' },
        { _id: 2, pos: 'b' },
        { _id: 'ab', pos: 'c' },
      ]);
      const scans = jest.spyOn(Collection.prototype, 'all');
      try {
        await items.updateOne({ _id: new Double(2), pos: { $lt: 'z' } }, { $set: { pos: 'y' } });
        expect(await items.findOne({ _id: Long.fromNumber(2) })).toEqual({ _id: 2, pos: 'y' });
        // The rest of the filter still decides.
        expect(await items.findOne({ _id: 1, pos: 'b' })).toBeNull();
        // $in too, in natural order whatever the list's.
        expect(await items.find({ _id: { $in: ['ab', 3, new Int32(1)] } }).toArray()).toEqual([
          { _id: 1, pos: 'a' },
          { _id: 'ab', pos: 'c' },
        ]);
        expect(await items.findOne({ _id: { $eq: 'ab' } })).toEqual({ _id: 'ab', pos: 'c' });
        expect(scans).not.toHaveBeenCalled();
        // Any other condition on _id still reads them all.
        expect(await items.find({ _id: { $gt: 1 } }).toArray()).toEqual([{ _id: 2, pos: 'y' }]);
        expect(await items.find({ _id: /^a/ }).toArray()).toEqual([{ _id: 'ab', pos: 'c' }]);
        expect(scans).toHaveBeenCalledTimes(2);
      } finally {
        scans.mockRestore();
      }
    });

    it('gives documents without an _id an ObjectId, and keeps given ids unchanged', async () => {
      const items = freshDb().collection('items');
      const { insertedId } = await items.insertOne({ name: 'no id' });
      expect(insertedId).toBeInstanceOf(ObjectId);
      expect(await items.findOne({ _id: insertedId })).toEqual({ _id: insertedId, name: 'no id' });
    });
  });

  describe('unique indexes', () => {
    it('rejects a duplicate _id with E11000, keyPattern and keyValue', async () => {
      const items = freshDb().collection('items');
      await items.insertOne({ _id: 1 as any, a: 1 });
      const error = await items.insertOne({ _id: 1 as any, a: 2 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MongoServerError);
      expect(error).toMatchObject({ code: 11000, keyPattern: { _id: 1 }, keyValue: { _id: 1 } });
      expect((error as Error).message).toMatch(
        /^E11000 duplicate key error collection: \S+\.items index: _id_/,
      );
      // An int32 1 and a double 1.0 are the same key.
      await expect(items.insertOne({ _id: new Double(1) as any })).rejects.toMatchObject({ code: 11000 });
      expect(await items.find().toArray()).toEqual([{ _id: 1, a: 1 }]);
    });

    it('enforces a secondary unique index on insert and on update', async () => {
      const users = freshDb().collection('users');
      await users.createIndex({ email: 1 }, { unique: true, name: 'email_unique' });
      await users.insertMany([
        { _id: 'a' as any, email: 'a@example.com' },
        { _id: 'b' as any, email: 'b@example.com' },
      ]);
      await expect(users.insertOne({ _id: 'c' as any, email: 'a@example.com' })).rejects.toMatchObject({
        code: 11000,
        keyPattern: { email: 1 },
        keyValue: { email: 'a@example.com' },
      });
      await expect(
        users.updateOne({ _id: 'b' as any }, { $set: { email: 'a@example.com' } }),
      ).rejects.toMatchObject({ code: 11000 });
      // Updating a document to keep its own key is not a conflict; freeing a key lets another take it.
      await users.updateOne({ _id: 'a' as any }, { $set: { email: 'a@example.com', seen: true } });
      await users.updateOne({ _id: 'a' as any }, { $set: { email: 'z@example.com' } });
      await users.insertOne({ _id: 'c' as any, email: 'a@example.com' });
      expect(await users.countDocuments()).toBe(3);
    });

    it('reports every failure of an unordered bulk write and applies the rest', async () => {
      const items = freshDb().collection('items');
      await items.insertOne({ _id: 2 as any });
      const error = await items
        .insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }, { _id: 1 }] as any[], { ordered: false })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MongoBulkWriteError);
      const bulkError = error as MongoBulkWriteError;
      expect(bulkError.writeErrors).toHaveLength(2);
      expect((bulkError.writeErrors as any[]).map((w) => [w.index, w.code])).toEqual([
        [1, 11000],
        [3, 11000],
      ]);
      expect(bulkError.insertedCount).toBe(2);
      expect(await items.find().sort({ _id: 1 }).toArray()).toEqual([{ _id: 1 }, { _id: 2 }, { _id: 3 }]);
    });

    it('stops an ordered bulk write at the first failure', async () => {
      const items = freshDb().collection('items');
      await expect(items.insertMany([{ _id: 1 }, { _id: 1 }, { _id: 2 }] as any[])).rejects.toBeInstanceOf(
        MongoBulkWriteError,
      );
      expect(await items.find().toArray()).toEqual([{ _id: 1 }]);
    });

    it('refuses to build a unique index over existing duplicates, and lists the indexes it has', async () => {
      const items = freshDb().collection('items');
      await items.insertMany([{ sku: 'x' }, { sku: 'x' }]);
      await expect(items.createIndex({ sku: 1 }, { unique: true })).rejects.toMatchObject({ code: 11000 });
      await items.createIndex({ sku: 1 }, { name: 'sku' });
      await items.createIndex({ sku: 1 }, { name: 'sku' }); // identical: a no-op
      expect(await items.listIndexes().toArray()).toEqual([
        { v: 2, key: { _id: 1 }, name: '_id_', unique: true },
        { v: 2, key: { sku: 1 }, name: 'sku' },
      ]);
      await expect(items.createIndex({ other: 1 }, { name: 'sku' })).rejects.toMatchObject({ code: 86 });
    });

    it('leaves documents out of a sparse unique index when they lack the field', async () => {
      const items = freshDb().collection('items');
      await items.createIndex({ code: 1 }, { unique: true, sparse: true });
      await items.insertMany([{ a: 1 }, { a: 2 }, { code: 'k' }]);
      await expect(items.insertOne({ code: 'k' })).rejects.toMatchObject({ code: 11000 });
    });
  });

  describe('cursors', () => {
    it('reads a large result across getMore batches, in sort order', async () => {
      const items = freshDb().collection<{ _id: number; n: number }>('items');
      const ids = Array.from({ length: 250 }, (_, i) => (i * 7919) % 250);
      await items.insertMany(ids.map((id) => ({ _id: id, n: id })));
      commands.length = 0;
      const docs = await items.find({}, { batchSize: 20 }).sort({ _id: 1 }).toArray();
      expect(docs.map((doc) => doc._id)).toEqual(Array.from({ length: 250 }, (_, i) => i));
      expect(commands.filter((name) => name === 'getMore')).toHaveLength(12);
    });

    it('applies filter, sort, skip, limit and projection', async () => {
      const items = freshDb().collection<{ _id: number; n: number; tag: string }>('items');
      await items.insertMany(Array.from({ length: 30 }, (_, i) => ({ _id: i, n: i % 5, tag: `t${i}` })));
      const page = await items
        .find({ _id: { $gt: 3, $lt: 25 } }, { projection: { tag: 0 } })
        .sort({ n: -1, _id: 1 })
        .skip(2)
        .limit(3)
        .toArray();
      expect(page).toEqual([
        { _id: 14, n: 4 },
        { _id: 19, n: 4 },
        { _id: 24, n: 4 },
      ]);
      expect(await items.countDocuments({ _id: { $gt: 3, $lt: 25 } })).toBe(21);
      expect(await items.countDocuments({ _id: { $gt: 3 } }, { skip: 20, limit: 100 })).toBe(6);
      expect(await items.countDocuments({ _id: { $gt: 100 } })).toBe(0);
      expect(await items.estimatedDocumentCount()).toBe(30);
    });

    it('sorts strings by their UTF-8 bytes and a missing field first, as a server without collation', async () => {
      const items = freshDb().collection<{ _id: string; at?: string }>('items');
      await items.insertMany([{ _id: 'a\u{1F600}', at: 'x' }, { _id: 'a\uFF21', at: 'x' }, { _id: 'b' }]);
      const sorted = await items.find({}).sort({ at: 1, _id: 1 }).toArray();
      expect(sorted.map((item) => item._id)).toEqual(['b', 'a\uFF21', 'a\u{1F600}']);
    });

    it('refuses a hint that names no index of the collection, and follows one that does', async () => {
      const items = freshDb().collection<{ _id: number; n: number }>('items');
      await items.insertMany([
        { _id: 1, n: 2 },
        { _id: 2, n: 1 },
      ]);
      await expect(items.find({}).hint('n_1').toArray()).rejects.toMatchObject({
        code: 2,
        message: expect.stringContaining('hint provided does not correspond to an existing index'),
      });
      await items.createIndex({ n: 1 }, { name: 'n_1' });
      expect(await items.find({}).sort({ n: 1 }).hint('n_1').toArray()).toEqual([
        { _id: 2, n: 1 },
        { _id: 1, n: 2 },
      ]);
    });

    it('kills a cursor closed early, so a later getMore on it fails', async () => {
      const items = freshDb().collection('items');
      await items.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: i })) as any[]);
      const cursor = items.find({}, { batchSize: 2 });
      await cursor.next();
      const id = cursor.id!;
      expect(id.isZero()).toBe(false);
      commands.length = 0;
      await cursor.close();
      expect(commands).toContain('killCursors');
      await expect(
        items.db.command({ getMore: id, collection: items.collectionName, batchSize: 2 }),
      ).rejects.toMatchObject({ code: 43 });
    });

    it('keeps serving the documents a cursor was opened on while they are rewritten', async () => {
      const items = freshDb().collection<{ _id: number; v: number }>('items');
      await items.insertMany(Array.from({ length: 6 }, (_, i) => ({ _id: i, v: 0 })));
      const cursor = items.find({}, { batchSize: 2 });
      await cursor.next();
      await items.updateMany({}, { $set: { v: 1 } });
      const rest = await cursor.toArray();
      expect(rest.map((doc) => doc.v)).toEqual([0, 0, 0, 0, 0]);
    });
  });

  describe('updates', () => {
    it('upserts from the filter equalities, with $setOnInsert only on insert', async () => {
      const items = freshDb().collection<any>('items');
      const first = await items.updateOne(
        { _id: 7, pos: { $lt: 'b' } },
        { $set: { name: 'x', pos: 'b' }, $setOnInsert: { created: 'now' }, $inc: { hits: 1 } },
        { upsert: true },
      );
      expect(first).toMatchObject({ matchedCount: 0, modifiedCount: 0, upsertedCount: 1, upsertedId: 7 });
      expect(await items.findOne({ _id: 7 })).toEqual({
        _id: 7,
        name: 'x',
        pos: 'b',
        created: 'now',
        hits: 1,
      });

      const second = await items.updateOne(
        { _id: 7, pos: { $lt: 'c' } },
        { $set: { pos: 'c' }, $setOnInsert: { created: 'later' }, $inc: { hits: 2 }, $unset: { name: '' } },
        { upsert: true },
      );
      expect(second).toMatchObject({ matchedCount: 1, modifiedCount: 1, upsertedCount: 0 });
      expect(await items.findOne({ _id: 7 })).toEqual({ _id: 7, pos: 'c', created: 'now', hits: 3 });

      const unchanged = await items.updateOne({ _id: 7 }, { $set: { pos: 'c' } });
      expect(unchanged).toMatchObject({ matchedCount: 1, modifiedCount: 0 });
    });

    it('answers a guarded upsert on a newer document with a duplicate key, changing nothing', async () => {
      const items = freshDb().collection<any>('items');
      await items.insertOne({ _id: 1, pos: 'm', v: 'new' });
      await expect(
        items.updateOne({ _id: 1, pos: { $lt: 'c' } }, { $set: { pos: 'c', v: 'old' } }, { upsert: true }),
      ).rejects.toMatchObject({ code: 11000, keyValue: { _id: 1 } });
      expect(await items.findOne({ _id: 1 })).toEqual({ _id: 1, pos: 'm', v: 'new' });
    });

    it('follows MongoDB number types in $inc', async () => {
      const items = freshDb().collection<any>('items');
      await items.insertOne({ _id: 1, i: new Int32(2 ** 31 - 1), d: new Double(1), l: Long.fromNumber(5) });
      await items.updateOne({ _id: 1 }, { $inc: { i: 1, d: 1, l: 1, fresh: 4 } });
      const doc = await items.findOne({ _id: 1 }, { promoteValues: false });
      expect(doc!.i).toBeInstanceOf(Long);
      expect(doc!.i.toString()).toBe(String(2 ** 31));
      expect(doc!.d).toBeInstanceOf(Double);
      expect(doc!.l).toBeInstanceOf(Long);
      expect(doc!.fresh).toBeInstanceOf(Int32);
      await expect(
        items
          .updateOne({ _id: 1 }, { $set: { s: 'x' } })
          .then(() => items.updateOne({ _id: 1 }, { $inc: { s: 1 } })),
      ).rejects.toMatchObject({ code: 14 });
    });

    it('replaces documents, keeps _id immutable and updates many', async () => {
      const items = freshDb().collection<any>('items');
      await items.insertMany([
        { _id: 1, a: 1, b: 1 },
        { _id: 2, a: 1 },
        { _id: 3, a: 2 },
      ]);
      await items.replaceOne({ _id: 1 }, { c: 3 });
      expect(await items.findOne({ _id: 1 })).toEqual({ _id: 1, c: 3 });
      await expect(items.updateOne({ _id: 2 }, { $set: { _id: 9 } })).rejects.toMatchObject({ code: 66 });
      const many = await items.updateMany({ a: 1 }, { $set: { seen: true } });
      expect(many).toMatchObject({ matchedCount: 1, modifiedCount: 1 });
      await expect(items.updateOne({ _id: 3 }, { $max: { a: 5 } })).rejects.toMatchObject({ code: 115 });
    });

    it('deletes one or many', async () => {
      const items = freshDb().collection<any>('items');
      await items.insertMany([
        { _id: 1, k: 'a' },
        { _id: 2, k: 'a' },
        { _id: 3, k: 'b' },
      ]);
      expect((await items.deleteOne({ k: 'a' })).deletedCount).toBe(1);
      expect((await items.deleteMany({})).deletedCount).toBe(2);
    });
  });

  describe('collections', () => {
    it('renames a collection, replacing the target only with dropTarget', async () => {
      const db = freshDb();
      await db.collection('next').insertOne({ _id: 1 as any, v: 'next' });
      await db.collection('live').insertOne({ _id: 1 as any, v: 'live' });
      await db.collection('live').createIndex({ v: 1 }, { name: 'v' });

      await expect(db.renameCollection('next', 'live')).rejects.toMatchObject({ code: 48 });
      await db.renameCollection('next', 'live', { dropTarget: true });
      expect(await db.collection('live').find().toArray()).toEqual([{ _id: 1, v: 'next' }]);
      expect((await db.collection('live').indexes()).map((index) => index.name)).toEqual(['_id_']);
      expect((await db.listCollections().toArray()).map((info) => info.name)).toEqual(['live']);
      await expect(db.renameCollection('missing', 'other')).rejects.toMatchObject({ code: 26 });
    });

    it('creates, lists and drops collections and databases', async () => {
      const db = freshDb();
      await db.createCollection('a');
      await expect(db.createCollection('a')).rejects.toMatchObject({ code: 48 });
      await db.collection('b').insertOne({ x: 1 });
      expect((await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort()).toEqual([
        'a',
        'b',
      ]);
      expect(await db.listCollections({ name: 'b' }).toArray()).toEqual([
        expect.objectContaining({ name: 'b', type: 'collection' }),
      ]);
      await expect(db.collection('a').drop()).resolves.toBe(true);
      expect((await db.listCollections().toArray()).map((c) => c.name)).toEqual(['b']);
      await db.dropDatabase();
      expect(await db.listCollections().toArray()).toEqual([]);
      await expect(db.collection('gone').listIndexes().toArray()).rejects.toMatchObject({ code: 26 });
    });

    it('refuses transactions, as a standalone server does', async () => {
      const items = freshDb().collection('items');
      const session = client.startSession();
      try {
        session.startTransaction();
        // The driver rewrites the server's code 20 "Transaction numbers are only allowed..." into this.
        await expect(items.insertOne({ a: 1 }, { session })).rejects.toThrow(
          /does not support retryable writes/,
        );
      } finally {
        await session.endSession();
      }
    });
  });

  describe('validators', () => {
    it('refuses an insert, update or upsert whose document fails the validator, as a write error, unless bypassed', async () => {
      const db = freshDb();
      await db.createCollection('items', { validator: { n: { $gte: 0 } } });
      const items = db.collection<{ _id: number; n: number }>('items');
      await items.insertOne({ _id: 1, n: 1 });

      const failed = { code: 121, errInfo: { failingDocumentId: 2 } };
      await expect(items.insertOne({ _id: 2, n: -1 })).rejects.toMatchObject(failed);
      await expect(items.updateOne({ _id: 1 }, { $set: { n: -1 } })).rejects.toMatchObject({ code: 121 });
      await expect(items.updateOne({ _id: 2 }, { $set: { n: -1 } }, { upsert: true })).rejects.toMatchObject(
        failed,
      );
      // Unordered: the others of the batch are written.
      const batch = items.insertMany(
        [
          { _id: 3, n: 3 },
          { _id: 4, n: -4 },
          { _id: 5, n: 5 },
        ],
        { ordered: false },
      );
      await expect(batch).rejects.toBeInstanceOf(MongoBulkWriteError);
      await expect(batch).rejects.toMatchObject({
        writeErrors: [expect.objectContaining({ index: 1, code: 121 })],
      });
      await items.insertOne({ _id: 6, n: -6 }, { bypassDocumentValidation: true });
      expect((await items.find({}).toArray()).map((doc) => doc._id)).toEqual([1, 3, 5, 6]);
    });

    it('takes a new validator, or none, from collMod, without checking the documents already stored', async () => {
      const db = freshDb();
      const items = db.collection<{ _id: number; n: number }>('items');
      await items.insertOne({ _id: 1, n: -1 });
      await db.command({ collMod: 'items', validator: { n: { $gte: 0 } } });
      // Exact: a server lists validationLevel and validationAction only when they were set
      // ("View Existing Validation Rules", MongoDB manual, 6.0 to 8.x), and the store never sets them.
      expect((await db.listCollections({ name: 'items' }, { nameOnly: false }).toArray())[0].options).toEqual(
        {
          validator: { n: { $gte: 0 } },
        },
      );
      await expect(items.insertOne({ _id: 2, n: -2 })).rejects.toMatchObject({ code: 121 });
      await db.command({ collMod: 'items', validator: {} });
      await items.insertOne({ _id: 2, n: -2 });
      expect(await items.countDocuments()).toBe(2);
      await expect(db.command({ collMod: 'missing', validator: {} })).rejects.toMatchObject({ code: 26 });
    });
  });

  describe('planned faults', () => {
    it('answers the next matching commands with the planned error, without running them, then runs them again', async () => {
      const items = freshDb().collection('items');
      const refused = new CommandError(121, 'DocumentValidationFailure', 'Document failed validation');
      await items.insertOne({ _id: 1 } as never);
      double.failCommands(2, (db, command) => db === items.dbName && command.insert === 'items', refused);
      for (const _id of [2, 3]) {
        await expect(items.insertOne({ _id } as never)).rejects.toMatchObject({
          code: 121,
          codeName: 'DocumentValidationFailure',
        });
      }
      // Other commands, reads of the same collection among them, are not matched.
      expect(await items.find({}).toArray()).toEqual([{ _id: 1 }]);
      expect(double.clearFaults()).toBe(0);
      await expect(items.insertOne({ _id: 4 } as never)).resolves.toMatchObject({ insertedId: 4 });
      expect(await items.find({}).toArray()).toEqual([{ _id: 1 }, { _id: 4 }]);
    });
  });
});
