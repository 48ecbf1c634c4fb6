import {
  Claim,
  IDEMPOTENCY_WINDOW_MS,
  IdempotencyStore,
} from '../../apps/api/src/idempotency/idempotency-store';
import { Collection, MongoClient, MongoServerError } from 'mongodb';
import { MongoIdempotencyStore } from '../../apps/api/src/idempotency/mongo-idempotency-store';
import { SqliteIdempotencyStore } from '../../apps/api/src/idempotency/sqlite-idempotency-store';
import { onMongoDouble, onSqlite, OpenInstances } from './support/store-instances';

const T = 1_800_000_000_000;
const LEASE = 60_000;
const claimOf = (owner: string, fields: Partial<Claim> = {}): Claim => ({
  scope: 'account-1',
  key: 'k',
  fingerprint: 'fp',
  owner,
  after: `${owner.length}`,
  now: T,
  ...fields,
});

/** What Idempotency-Key relies on, from either adapter: one holder per key across instances. */
function contract(name: string, open: OpenInstances<IdempotencyStore>) {
  describe(`${name} idempotency store`, () => {
    let store: IdempotencyStore;
    let other: IdempotencyStore;

    beforeEach(async () => {
      [store, other] = await open();
    });
    afterEach(async () => {
      await store.close();
      await other.close();
    });

    it('gives a key to one claim, shows it running to the others, then its answer', async () => {
      expect(await store.claim(claimOf('a'))).toBeNull();
      expect(await other.claim(claimOf('b', { fingerprint: 'other' }))).toEqual({
        fingerprint: 'fp',
        started: T,
        response: null,
        owner: 'a',
        after: '1',
      });
      await other.complete('account-1', 'k', 'b', 'not the holder');
      await store.complete('account-1', 'k', 'a', 'sealed answer');
      expect(await other.claim(claimOf('c', { now: T + 1 }))).toEqual({
        fingerprint: 'fp',
        started: T,
        response: 'sealed answer',
        owner: 'a',
        after: '1',
      });
    });

    it('lets exactly one of many parallel claims on two instances hold the key', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? store : other).claim(claimOf(`o${i}`))),
      );
      expect(results.filter((result) => result === null)).toHaveLength(1);
    });

    it('gives the key of a request that died to exactly one of many parallel takeovers', async () => {
      expect(await store.claim(claimOf('dead'))).toBeNull();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? store : other).takeOver(claimOf(`r${i}`, { now: T + LEASE }), 'dead'),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('keeps keys per account', async () => {
      expect(await store.claim(claimOf('a'))).toBeNull();
      expect(await other.claim(claimOf('b', { scope: 'account-2' }))).toBeNull();
    });

    it('frees a released key, an expired answer and, when asked, the key of a request that died', async () => {
      expect(await store.claim(claimOf('a'))).toBeNull();
      await store.release('account-1', 'k', 'a');
      expect(await other.claim(claimOf('b'))).toBeNull();
      // b died without an answer: its record is shown until a claim takes the key over from it.
      expect(await store.claim(claimOf('c', { now: T + LEASE }))).toMatchObject({
        owner: 'b',
        response: null,
      });
      expect(await store.takeOver(claimOf('c', { now: T + LEASE }), 'b')).toBe(true);
      // Taken already: another retry that saw b's record is told so.
      expect(await other.takeOver(claimOf('x', { now: T + LEASE }), 'b')).toBe(false);
      expect(await other.claim(claimOf('d', { now: T + LEASE }))).toMatchObject({
        owner: 'c',
        started: T + LEASE,
        after: '1',
      });
      await store.complete('account-1', 'k', 'c', 'answer');
      // An answered key is never taken over.
      expect(await other.takeOver(claimOf('d', { now: T + LEASE }), 'c')).toBe(false);
      // An answer is kept for the window, then the key is new again.
      expect(await other.claim(claimOf('d', { now: T + LEASE + IDEMPOTENCY_WINDOW_MS - 1 }))).not.toBeNull();
      expect(await other.claim(claimOf('d', { now: T + LEASE + IDEMPOTENCY_WINDOW_MS }))).toBeNull();
      // A release by an attempt that no longer holds the key changes nothing.
      await store.release('account-1', 'k', 'c');
      expect(await store.claim(claimOf('e', { now: T + LEASE + IDEMPOTENCY_WINDOW_MS }))).not.toBeNull();
    });

    it("trims an account's oldest keys beyond a bound, and prunes expired ones", async () => {
      for (let i = 0; i < 10; i++)
        expect(await store.claim(claimOf('a', { key: `k${i}`, now: T + i }))).toBeNull();
      await store.claim(claimOf('a', { scope: 'account-2', key: 'k0', now: T }));
      await store.trim('account-1', 4);
      for (let i = 0; i < 10; i++) {
        const held = await other.claim(claimOf('b', { key: `k${i}`, now: T + 20 }));
        expect({ i, held: held !== null }).toEqual({ i, held: i >= 6 });
      }
      expect(await other.claim(claimOf('b', { scope: 'account-2', key: 'k0', now: T + 20 }))).not.toBeNull();
      await store.prune(T + IDEMPOTENCY_WINDOW_MS + 15);
      expect(await other.claim(claimOf('z', { scope: 'account-2', key: 'k0', now: T + 30 }))).toBeNull();
    });

    it('trims nothing of an account within the bound, however many keys newer accounts hold', async () => {
      for (let i = 0; i < 2; i++) await store.claim(claimOf('a', { key: `k${i}`, now: T + i }));
      for (let i = 0; i < 5; i++)
        await store.claim(claimOf('a', { scope: 'account-2', key: `k${i}`, now: T + 10 + i }));
      await store.trim('account-1', 4);
      await store.trim('account-2', 4);
      const held = async (scope: string, key: string) =>
        (await other.claim(claimOf('b', { scope, key, now: T + 20 }))) !== null;
      expect([await held('account-1', 'k0'), await held('account-1', 'k1')]).toEqual([true, true]);
      expect([await held('account-2', 'k0'), await held('account-2', 'k1')]).toEqual([false, true]);
    });

    it('takes over an expired key among others the account still holds', async () => {
      await store.claim(claimOf('a', { key: 'held', now: T + IDEMPOTENCY_WINDOW_MS }));
      await store.claim(claimOf('b', { key: 'expired', now: T }));
      const later = T + IDEMPOTENCY_WINDOW_MS + 1;
      expect(await other.claim(claimOf('c', { key: 'expired', now: later }))).toBeNull();
      expect(await store.claim(claimOf('d', { key: 'expired', now: later }))).toMatchObject({ owner: 'c' });
      expect(await store.claim(claimOf('d', { key: 'held', now: later }))).toMatchObject({ owner: 'a' });
    });

    it('gives an expired key to exactly one of many parallel claims on two instances', async () => {
      await store.claim(claimOf('a', { now: T }));
      const later = T + IDEMPOTENCY_WINDOW_MS + 1;
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) => [store, other][i % 2].claim(claimOf(`c${i}`, { now: later }))),
      );
      expect(claims.filter((held) => held === null)).toHaveLength(1);
    });

    it('prunes the expired records of every account and keeps the others', async () => {
      const scopes = ['account-a', 'account-b', 'account-c', 'account-d'];
      for (const [index, scope] of scopes.entries()) {
        expect(await store.claim(claimOf('a', { scope, key: 'old', now: T + index }))).toBeNull();
        await store.complete(scope, 'old', 'a', 'old answer');
        if (index % 2 === 0) {
          expect(await store.claim(claimOf('a', { scope, key: 'new', now: T + 100 }))).toBeNull();
          await store.complete(scope, 'new', 'a', 'new answer');
        }
      }
      await store.prune(T + IDEMPOTENCY_WINDOW_MS + 50);
      // Seen from before the window ended: a pruned record no longer holds its key.
      const seen = async (scope: string, key: string) =>
        (await other.claim(claimOf('b', { scope, key, fingerprint: 'probe', now: T + 200 })))?.response ??
        null;
      for (const [index, scope] of scopes.entries()) {
        expect({ scope, old: await seen(scope, 'old') }).toEqual({ scope, old: null });
        expect({ scope, new: await seen(scope, 'new') }).toEqual({
          scope,
          new: index % 2 === 0 ? 'new answer' : null,
        });
      }
    });
  });
}

contract(
  'SQLite',
  onSqlite('idempotency-', (dir) => new SqliteIdempotencyStore(dir)),
);
const mongo = onMongoDouble('idempotency', (uri) => new MongoIdempotencyStore(uri));
contract('MongoDB', mongo.open);

describe('MongoDB idempotency store, beyond the contract', () => {
  let store: MongoIdempotencyStore;
  let client: MongoClient;
  /** The adapter's collection, to stage failures only a real server produces. */
  const keysOf = () => (store as unknown as { keys: Collection }).keys;

  beforeEach(async () => {
    store = new MongoIdempotencyStore(mongo.uriOf('idempotency_more'));
    client = await MongoClient.connect(mongo.uriOf('idempotency_more'));
  });
  afterEach(async () => {
    await store.close();
    await client.db().dropDatabase();
    await client.close();
  });

  it('passes on a failed insert that is not a duplicate key, instead of reading the key as held', async () => {
    for (const failure of [
      new Error('connection reset'),
      new MongoServerError({ message: 'Document failed validation', code: 121 }),
    ]) {
      jest.spyOn(keysOf(), 'insertOne').mockRejectedValueOnce(failure);
      await expect(store.claim(claimOf('a'))).rejects.toBe(failure);
    }
  });

  it('loses an expired key to a claim that took it over between its look and its own takeover', async () => {
    const rival = new MongoIdempotencyStore(mongo.uriOf('idempotency_more'));
    try {
      await store.claim(claimOf('a', { now: T }));
      const later = T + IDEMPOTENCY_WINDOW_MS + 1;
      const keys = keysOf();
      const replace = keys.replaceOne.bind(keys);
      jest.spyOn(keys, 'replaceOne').mockImplementationOnce(async (...args) => {
        expect(await rival.claim(claimOf('r', { now: later }))).toBeNull();
        return replace(...args);
      });
      expect(await store.claim(claimOf('c', { now: later }))).toMatchObject({ owner: 'r' });
    } finally {
      await rival.close();
    }
  });

  it('makes the indexes trim and prune walk, once, and again after a failed attempt', async () => {
    const createIndex = jest
      .spyOn(keysOf(), 'createIndex')
      .mockRejectedValueOnce(new Error('not authorized'));
    await expect(store.trim('account-1', 4)).rejects.toThrow('not authorized');
    await store.trim('account-1', 4);
    await store.prune(T);
    const indexes = await client.db().collection('idempotency_keys').listIndexes().toArray();
    expect(indexes.map(({ name, key }) => ({ name, key }))).toEqual([
      { name: '_id_', key: { _id: 1 } },
      { name: 'by_scope', key: { '_id.scope': 1, started: -1 } },
      { name: 'by_start', key: { started: 1 } },
    ]);
    // Both indexes by the failed attempt and by the next; prune reuses them.
    expect(createIndex).toHaveBeenCalledTimes(4);
  });
});
