import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
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

  it('keeps parked messages in position order, then by processor; parking again replaces; unparking removes one', async () => {
    const parkedAt = '2026-11-24T00:00:00.000Z';
    const message = (processor: string, eventId: string, commit: number, reason = 'permanent') => ({
      processor,
      eventId,
      stream: `user-${eventId}`,
      revision: 0,
      type: 'UserPatched.v1',
      position: position(commit),
      reason,
      attempts: 1,
      parkedAt,
    });
    // 100 after 9 and 10: positions compare as numbers, not as text.
    await store.park(message('q', 'e-100', 100));
    await store.park(message('q', 'e-10', 10));
    await store.park(message('p', 'e-10', 10));
    await store.park(message('p', 'e-9', 9));
    await store.park(message('p', 'e-9', 9, 'parked again'));

    expect((await store.parked()).map((m) => `${m.processor} ${m.eventId}`)).toEqual([
      'p e-9',
      'p e-10',
      'q e-10',
      'q e-100',
    ]);
    expect(await store.parked('p')).toEqual([
      message('p', 'e-9', 9, 'parked again'),
      message('p', 'e-10', 10),
    ]);
    expect(await store.unpark('p', 'e-9')).toBe(true);
    expect(await store.unpark('p', 'e-9')).toBe(false);
    expect((await store.parked('p')).map((m) => m.eventId)).toEqual(['e-10']);
  });

  it("forgets one processor's position and state on reset, and keeps its parked messages and the others'", async () => {
    // q's first: a reset that deleted whatever came first would take q's.
    await store.storeState('q', position(6), new Map([['a', 2]]));
    await store.storeState('p', position(5), new Map([['a', 1]]));
    await store.park({
      processor: 'p',
      eventId: 'e-1',
      stream: 'user-e-1',
      revision: 0,
      type: 'UserPatched.v1',
      position: position(4),
      reason: 'permanent',
      attempts: 1,
      parkedAt: '2026-01-01T00:00:00.000Z',
    });

    await store.reset('p');

    expect(await store.load('p')).toBeNull();
    expect(await store.loadState('p')).toEqual(new Map());
    expect(await store.load('q')).toEqual(position(6));
    expect(await store.loadState('q')).toEqual(new Map([['a', 2]]));
    expect((await store.parked('p')).map((message) => message.eventId)).toEqual(['e-1']);
    // Stored anew from the start, as a processor replaying does: no later position refuses it.
    await store.storeState('p', position(1), new Map([['b', 3]]));
    expect(await store.loadState('p')).toEqual(new Map([['b', 3]]));
  });

  it('sets a position with store, back as well as forward (a rebuild moves one back), apart per processor', async () => {
    await store.store('p', position(5));
    await store.store('q', position(7));
    await store.store('p', position(0));
    expect(await store.load('p')).toEqual(position(0));
    expect(await store.load('q')).toEqual(position(7));
    await store.close();
    store = await reopen();
    expect(await store.load('p')).toEqual(position(0));
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

  it('creates its file private, before SQLite opens it', async () => {
    const file = join(dir, 'own-checkpoints.db');
    const store = SqliteCheckpointStore.open(file);
    try {
      expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      await store.close();
    }
    // An in-memory store has no file to create.
    await SqliteCheckpointStore.open(':memory:').close();
    expect(existsSync(':memory:')).toBe(false);
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

  it('stores state while another connection writes the same file (the saga worker beside the API): never busy', async () => {
    const file = join(dir, 'checkpoints.db');
    const store = SqliteCheckpointStore.open(file);
    // Another thread, its own connection, committing checkpoints of its own as fast as it can.
    const writer = new Worker(
      `const Database = require('better-sqlite3');
       const { parentPort, workerData } = require('node:worker_threads');
       const db = new Database(workerData.file, { timeout: 10000 });
       const write = db.prepare("INSERT OR REPLACE INTO processor_checkpoints (processor, commit_position, prepare_position) VALUES ('other', ?, ?)");
       let stop = false;
       parentPort.on('message', () => (stop = true));
       parentPort.postMessage('started');
       (function loop(i) {
         if (stop) { db.close(); parentPort.postMessage(i); return; }
         for (let n = 0; n < 500; n++, i++) write.run(String(i), String(i));
         setImmediate(loop, i);
       })(0);`,
      { eval: true, workerData: { file } },
    );
    try {
      await new Promise((resolve) => writer.once('message', resolve));
      const failures: string[] = [];
      for (let i = 1; i <= 1000; i++) {
        await store
          .storeState('p', position(i), new Map([['n', i]]))
          .catch((error: Error) => failures.push(error.message));
      }
      writer.postMessage('stop');
      const written = await new Promise<number>((resolve) => writer.once('message', resolve));

      expect(failures).toEqual([]);
      expect(written).toBeGreaterThan(0);
      expect(await store.load('p')).toEqual(position(1000));
    } finally {
      await writer.terminate();
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
