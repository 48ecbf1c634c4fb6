import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore, position, SqliteCheckpointStore } from '@chronicle/event-store';
import { MongoCheckpointStore } from '@chronicle/event-store/mongo';
import { MongoClient } from 'mongodb';
import { MongoDouble, startMongoDouble } from '../doubles/mongo/mongo-double';

/** What every CheckpointStore keeps for a processor: its position, and its own state beside it. */
function describeCheckpointStoreContract(
  open: () => Promise<{ store: CheckpointStore; reopen: () => Promise<CheckpointStore> }>,
) {
  let store: CheckpointStore;
  let reopen: () => Promise<CheckpointStore>;

  beforeEach(async () => {
    ({ store, reopen } = await open());
  });
  afterEach(() => store.close());

  it('has no state and no position before the first', async () => {
    expect(await store.loadState('p')).toEqual(new Map());
    expect(await store.load('p')).toBeNull();
  });

  it('keeps state entries with the position, changes and removes them, apart per processor', async () => {
    await store.storeState(
      'p',
      position(10),
      new Map<string, unknown>([
        ['a', { version: 1, ended: [['s', 5]] }],
        ['b', { version: 0, ended: [] }],
      ]),
    );
    await store.storeState('q', position(11), new Map([['a', { other: true }]]));
    await store.storeState(
      'p',
      position(12),
      new Map<string, unknown>([
        ['a', { version: 2, ended: [] }],
        ['b', null],
      ]),
    );
    await store.close();
    store = await reopen();

    expect(await store.loadState('p')).toEqual(new Map([['a', { version: 2, ended: [] }]]));
    expect(await store.load('p')).toEqual(position(12));
    expect(await store.loadState('q')).toEqual(new Map([['a', { other: true }]]));
    expect(await store.load('q')).toEqual(position(11));
  });

  it('never overwrites what was stored at a later position with an earlier one (another instance lagging)', async () => {
    await store.storeState('p', position(12), new Map([['a', 2]]));
    await store.storeState('p', position(10), new Map([['a', 1]]));
    await store.storeState('p', position(12), new Map([['c', 3]]));

    expect((await store.loadState('p')).get('a')).toBe(2);
    expect((await store.loadState('p')).get('c')).toBe(3);
    expect(await store.load('p')).toEqual(position(12));
  });

  it('moves the position with no changed entry', async () => {
    await store.storeState('p', position(3), new Map([['a', 1]]));
    await store.storeState('p', position(4), new Map());

    expect(await store.load('p')).toEqual(position(4));
    expect(await store.loadState('p')).toEqual(new Map([['a', 1]]));
  });
}

describe('SqliteCheckpointStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'checkpoint-store-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  describeCheckpointStoreContract(async () => {
    const file = join(dir, 'checkpoints.db');
    return {
      store: SqliteCheckpointStore.open(file),
      reopen: () => Promise.resolve(SqliteCheckpointStore.open(file)),
    };
  });

  it('stores the entries and the position in one transaction: a failure leaves neither', async () => {
    const store = SqliteCheckpointStore.open(join(dir, 'checkpoints.db'));
    try {
      await store.storeState('p', position(1), new Map([['a', 1]]));
      // A value JSON cannot write fails the transaction part-way, after the first entry.
      const unwritable = new Map<string, unknown>([
        ['b', 2],
        ['c', 10n],
      ]);
      await expect(store.storeState('p', position(2), unwritable)).rejects.toThrow(TypeError);

      expect(await store.loadState('p')).toEqual(new Map([['a', 1]]));
      expect(await store.load('p')).toEqual(position(1));
    } finally {
      await store.close();
    }
  });
});

describe('MongoCheckpointStore on the wire-protocol double', () => {
  let double: MongoDouble;
  const dbNames: string[] = [];
  beforeAll(async () => {
    double = await startMongoDouble();
  });
  afterAll(async () => {
    const client = await MongoClient.connect(double.uri);
    try {
      for (const dbName of dbNames) await client.db(dbName).dropDatabase();
    } finally {
      await client.close();
      await double.stop();
    }
  });

  describeCheckpointStoreContract(async () => {
    const dbName = `checkpoints_${randomUUID().replaceAll('-', '')}`;
    dbNames.push(dbName);
    return {
      store: await MongoCheckpointStore.connect(double.uri, dbName),
      reopen: () => MongoCheckpointStore.connect(double.uri, dbName),
    };
  });
});
