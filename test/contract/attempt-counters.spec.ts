import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Collection, MongoClient, MongoServerError } from 'mongodb';
import { AttemptCounters } from '@chronicle/application';
import { MongoAttemptCounters } from '../../libs/auth/src/attempt-counters/mongo-attempt-counters';
import { SqliteAttemptCounters } from '../../libs/auth/src/attempt-counters/sqlite-attempt-counters';
import { onMongoDouble, onSqlite, OpenInstances } from './support/store-instances';

const WINDOW_MS = 900_000;
const end = (window: number) => (window + 1) * WINDOW_MS;

/** What the limits rely on, from either adapter: shared counts per key and window. */
function contract(name: string, open: OpenInstances<AttemptCounters>) {
  describe(`${name} attempt counters`, () => {
    let counters: AttemptCounters;
    let other: AttemptCounters;

    beforeEach(async () => {
      [counters, other] = await open();
    });
    afterEach(async () => {
      await counters.close();
      await other.close();
    });

    it('count per key and window, shared by every instance on the same store', async () => {
      expect(await counters.add('login-account:a', 10, end(10))).toBe(1);
      expect(await other.add('login-account:a', 10, end(10))).toBe(2);
      expect(await counters.add('login-account:b', 10, end(10))).toBe(1);
      expect(await counters.add('login-account:a', 11, end(11))).toBe(1);
      expect(await other.add('login-account:a', 11, end(11))).toBe(2);
    });

    it('count parallel attempts, each at least once', async () => {
      const counts = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? counters : other).add('login-client:c', 10, end(10))),
      );
      expect(Math.max(...counts)).toBe(20);
      expect(await counters.add('login-client:c', 10, end(10))).toBe(21);
    });

    it('take an attempt back, never below zero', async () => {
      await counters.add('k', 10, end(10));
      await counters.add('k', 10, end(10));
      await other.remove('k', 10);
      await other.remove('k', 10);
      await other.remove('k', 10);
      await other.remove('unknown', 10);
      expect(await counters.add('k', 10, end(10))).toBe(1);
    });

    it('keep a mark until it expires, for every instance, and move its expiry when marked again', async () => {
      expect(await counters.marked('login-known:a', end(10))).toBe(false);
      await counters.mark('login-known:a', end(12));
      expect(await other.marked('login-known:a', end(10))).toBe(true);
      expect(await other.marked('login-known:b', end(10))).toBe(false);
      expect(await other.marked('login-known:a', end(13))).toBe(false);
      await other.mark('login-known:a', end(20));
      expect(await counters.marked('login-known:a', end(13))).toBe(true);
      // A mark is no counter: counting the same key starts from one.
      expect(await counters.add('login-known:a', 10, end(10))).toBe(1);
    });
  });
}

contract(
  'SQLite',
  onSqlite('attempt-counters-', (dir) => new SqliteAttemptCounters(dir)),
);
const mongo = onMongoDouble('counters', (uri) => new MongoAttemptCounters(uri));
contract('MongoDB', mongo.open);

describe('bounded state', () => {
  it('SQLite: counters of past windows go when a later window is counted, and counts outlive the process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'attempt-counters-'));
    try {
      const counters = new SqliteAttemptCounters(dir);
      for (let i = 0; i < 50; i++) await counters.add(`login-account:${i}`, 10, end(10));
      await counters.close();

      const reopened = new SqliteAttemptCounters(dir);
      expect(await reopened.add('login-account:0', 10, end(10))).toBe(2);
      expect(await reopened.add('login-account:0', 11, end(11))).toBe(1);
      const db = (reopened as unknown as { db: { prepare(sql: string): { all(): unknown[] } } }).db;
      const rows = db.prepare('SELECT key, window, count FROM attempts').all();
      expect(rows).toEqual([{ key: 'login-account:0', window: 11, count: 1 }]);
      // The prune as the windows turn reads only the rows it deletes, whatever the table holds.
      const plan = db.prepare('EXPLAIN QUERY PLAN DELETE FROM attempts WHERE window < 11').all();
      expect(JSON.stringify(plan)).toContain('USING INDEX attempts_by_window');
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('MongoDB: a prune deletes the counters of windows that are over', async () => {
    const counters = new MongoAttemptCounters(mongo.uriOf('prune'));
    try {
      await counters.add('a', 10, end(10));
      await counters.add('b', 11, end(11));
      await counters.prune(end(10));
      expect(await counters.add('a', 10, end(10))).toBe(1);
      expect(await counters.add('b', 11, end(11))).toBe(2);
    } finally {
      await counters.close();
    }
  });
});

describe('MongoDB attempt counters, beyond the contract', () => {
  /** The adapter's collection, to stage what only a real server's concurrency produces. */
  const collectionOf = (counters: MongoAttemptCounters) =>
    (counters as unknown as { counters: Collection }).counters;
  const duplicateKey = () => new MongoServerError({ message: 'E11000 duplicate key error', code: 11000 });

  it('counts again when its upsert lost the race for a new counter to a concurrent first attempt', async () => {
    const counters = new MongoAttemptCounters(mongo.uriOf('race'));
    try {
      const collection = collectionOf(counters);
      const upsert = collection.updateOne.bind(collection);
      // As a server answers the second of two upserts racing on a new _id.
      jest
        .spyOn(collection, 'updateOne')
        .mockImplementationOnce(async (...args) => {
          await upsert(...args);
          throw duplicateKey();
        })
        .mockImplementation(upsert);
      expect(await counters.add('a', 10, end(10))).toBe(2);
    } finally {
      await counters.close();
    }
  });

  it('throws a second duplicate key, and any other failure, instead of retrying', async () => {
    for (const failures of [[duplicateKey(), duplicateKey()], [new Error('connection reset')]]) {
      const counters = new MongoAttemptCounters(mongo.uriOf('failing'));
      try {
        const updateOne = jest.spyOn(collectionOf(counters), 'updateOne');
        for (const failure of failures) updateOne.mockRejectedValueOnce(failure);
        await expect(counters.add('a', 10, end(10))).rejects.toBe(failures[failures.length - 1]);
        expect(updateOne).toHaveBeenCalledTimes(failures.length);
      } finally {
        await counters.close();
      }
    }
  });

  it("keeps its counters in the URI's database, or in `chronicle` when the URI names none", async () => {
    const named = new MongoAttemptCounters(mongo.uriOf('named'));
    const unnamed = new MongoAttemptCounters(mongo.uriOf(''));
    const client = await MongoClient.connect(mongo.uriOf(''));
    try {
      await named.add('a', 10, end(10));
      await unnamed.add('b', 10, end(10));
      const counter = (db: string, id: string) =>
        client
          .db(db)
          .collection('attempt_counters')
          .findOne({ _id: id as never });
      expect(await counter('named', '10:a')).toMatchObject({ count: 1, expiresAt: end(10) });
      expect(await counter('chronicle', '10:b')).toMatchObject({ count: 1, expiresAt: end(10) });
    } finally {
      await client.close();
      await named.close();
      await unnamed.close();
    }
  });

  it('prunes every minute once it has counted, with one timer, cleared on close', async () => {
    const every = jest.spyOn(global, 'setInterval');
    const clear = jest.spyOn(global, 'clearInterval');
    let now = 0;
    const counters = new MongoAttemptCounters(mongo.uriOf('pruned'), () => now);
    try {
      await counters.add('a', 10, end(10));
      await counters.add('b', 11, end(11));
      const timers = every.mock.calls.filter(([, ms]) => ms === 60_000);
      expect(timers).toHaveLength(1);
      now = end(10);
      timers[0][0]();
      // The prune runs in the background: the window that is over goes, the other stays.
      const client = await MongoClient.connect(mongo.uriOf('pruned'));
      try {
        const left = async () =>
          (await client.db().collection('attempt_counters').find().toArray()).map((counter) => counter._id);
        for (let turn = 0; turn < 100 && (await left()).length > 1; turn++) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        expect(await left()).toEqual(['11:b']);
      } finally {
        await client.close();
      }
      const timer = every.mock.results[every.mock.calls.indexOf(timers[0])].value as NodeJS.Timeout;
      await counters.close();
      expect(clear).toHaveBeenCalledWith(timer);
    } finally {
      every.mockRestore();
      clear.mockRestore();
      await counters.close().catch(() => undefined);
    }
  });
});
