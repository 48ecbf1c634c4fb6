import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Binary, BSON, MongoBulkWriteError, MongoClient } from 'mongodb';
import { ConfigError } from '@chronicle/config';
import {
  DATA_KEYS_FILE,
  DataKeyStore,
  DataSubject,
  Erasure,
  SqliteDataKeyStore,
  SubjectErasedError,
  subjectName,
} from '@chronicle/event-store';
import { MongoDataKeyStore } from '@chronicle/event-store/mongo';
import { MongoDouble, startMongoDouble } from '../doubles/mongo/mongo-double';
import { spawnDataKeyWorker } from './support/spawn-data-key-worker';

const SECRET = Buffer.from('a data key secret of 32 or more characters');
const OTHER_SECRET = Buffer.from('another secret, also long enough to be taken');

const ada: DataSubject = { kind: 'user', id: '6f1c2d3e-0000-4000-8000-00000000000a' };
const bob: DataSubject = { kind: 'user', id: '6f1c2d3e-0000-4000-8000-00000000000b' };
const customer1: DataSubject = { kind: 'customer', id: '1' };
const user1: DataSubject = { kind: 'user', id: '1' };
const erasureOf = (subject: DataSubject, erasedAt = '2026-11-27T02:00:00.000Z'): Erasure => ({
  subject,
  erasedAt,
});

/** A store's backing, seen from outside the adapter. */
interface Backing {
  /** A store on the backing under `secret`: several of them are several instances. */
  open(secret?: Buffer): DataKeyStore;
  /** Every byte the backing keeps (SQLite: every file under DATA_DIR; MongoDB: every document). */
  storedBytes(): Promise<Buffer>;
  /** The wrapped form of a subject's key as stored, or null. */
  wrapped(name: string): Promise<Buffer | null>;
  dispose(): Promise<void>;
}

/** The forms a key could be written in. */
const spellings = (bytes: Buffer) => [
  bytes,
  Buffer.from(bytes.toString('base64')),
  Buffer.from(bytes.toString('base64url')),
  Buffer.from(bytes.toString('hex')),
];

/** What the key store promises, from either adapter. */
function contract(name: string, setUp: () => Promise<Backing>) {
  describe(`${name} data key store`, () => {
    let backing: Backing;
    let store: DataKeyStore;
    let other: DataKeyStore;

    beforeEach(async () => {
      backing = await setUp();
      store = backing.open();
      other = backing.open();
    });
    afterEach(async () => {
      await store.close();
      await other.close();
      await backing.dispose();
    });

    it('makes one key per subject: the same on every call and every instance', async () => {
      const key = await store.create(ada);
      expect(key).toHaveLength(32);
      expect((await store.create(ada)).equals(key)).toBe(true);
      expect((await other.create(ada)).equals(key)).toBe(true);
      expect(await other.get(ada)).toEqual({ state: 'active', key });
    });

    it('gives every one of many parallel creates on two instances the same key', async () => {
      const keys = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? store : other).create(bob)),
      );
      expect(new Set(keys.map((key) => key.toString('hex'))).size).toBe(1);
    });

    it('makes many keys in one call, beside keys made before and erasures, the same on every instance', async () => {
      const adaKey = await store.create(ada);
      await store.destroy(erasureOf(bob));
      const many = Array.from({ length: 50 }, (_, i): DataSubject => ({ kind: 'customer', id: `${i + 1}` }));
      const [held, racing] = await Promise.all([
        store.createMany([ada, bob, ...many]),
        other.createMany([...many].reverse()),
      ]);
      expect(held.get(subjectName(ada))).toEqual({ state: 'active', key: adaKey });
      expect(held.get(subjectName(bob))).toEqual({ state: 'erased', erasure: erasureOf(bob) });
      for (const subject of many) {
        const name = subjectName(subject);
        expect(held.get(name)).toEqual({ state: 'active', key: expect.any(Buffer) });
        expect(racing.get(name)).toEqual(held.get(name));
        expect(await other.get(subject)).toEqual(held.get(name));
      }
      expect((await store.createMany([])).size).toBe(0);
    });

    it('keeps subjects apart, a user and a customer of the same id too', async () => {
      const keys = [await store.create(ada), await store.create(user1), await store.create(customer1)];
      expect(new Set(keys.map((key) => key.toString('hex'))).size).toBe(3);
      expect((await other.get(customer1))?.state).toBe('active');
      expect(await other.get({ kind: 'customer', id: ada.id })).toBeNull();
    });

    it('answers what it holds for many subjects at once: a key, an erasure, or nothing', async () => {
      const adaKey = await store.create(ada);
      await store.create(bob);
      await store.destroy(erasureOf(bob));
      const held = await other.getMany([ada, bob, customer1]);
      expect([...held.keys()].sort()).toEqual([subjectName(ada), subjectName(bob)].sort());
      expect(held.get(subjectName(ada))).toEqual({ state: 'active', key: adaKey });
      expect(held.get(subjectName(bob))).toEqual({ state: 'erased', erasure: erasureOf(bob) });
      expect((await other.getMany([])).size).toBe(0);
      expect(await other.get(customer1)).toBeNull();
    });

    it('destroys a key for good: erased on every instance, never made again, the first erasure kept', async () => {
      await store.create(ada);
      expect(await store.destroy(erasureOf(ada))).toEqual(erasureOf(ada));
      expect(await other.get(ada)).toEqual({ state: 'erased', erasure: erasureOf(ada) });
      await expect(other.create(ada)).rejects.toThrow(SubjectErasedError);
      await expect(store.create(ada)).rejects.toMatchObject({ code: 'erased', erasure: erasureOf(ada) });
      // Erasing again (a retry, a restore re-applying it) keeps the first record.
      expect(await other.destroy(erasureOf(ada, '2027-01-01T00:00:00.000Z'))).toEqual(erasureOf(ada));
      expect(await store.get(ada)).toEqual({ state: 'erased', erasure: erasureOf(ada) });
    });

    it('records the erasure of a subject that never had a key, and makes it none after', async () => {
      expect(await store.destroy(erasureOf(customer1))).toEqual(erasureOf(customer1));
      await expect(other.create(customer1)).rejects.toThrow(
        `customer-1 was erased at ${erasureOf(ada).erasedAt}`,
      );
      expect((await other.get(customer1))?.state).toBe('erased');
    });

    it('lists the erasures in order of subject, page by page, and nothing else', async () => {
      await store.create(ada);
      const erased = Array.from({ length: 7 }, (_, i): DataSubject => ({
        kind: 'customer',
        id: `${100 + i}`,
      }));
      for (const [i, subject] of erased.entries()) {
        await store.create(subject);
        await (i % 2 ? store : other).destroy(erasureOf(subject, `2026-11-27T02:00:0${i}.000Z`));
      }
      await store.destroy(erasureOf(bob));
      const pages: Erasure[][] = [];
      for (let after: string | null = null; ;) {
        const page = await other.erasures(after, 3);
        if (page.length === 0) break;
        pages.push(page);
        after = subjectName(page[page.length - 1].subject);
      }
      expect(pages.map((page) => page.length)).toEqual([3, 3, 2]);
      expect(pages.flat()).toEqual([
        ...erased.map((subject, i) => erasureOf(subject, `2026-11-27T02:00:0${i}.000Z`)),
        erasureOf(bob),
      ]);
    });

    it('tells every instance which keys were destroyed since a time, oldest first, whatever the erasure says', async () => {
      await store.create(ada);
      await store.create(bob);
      const before = new Date(Date.now() - 1);
      // The erasure's own time is its event's (a crashed one is completed later): the poll goes by the destroy.
      await store.destroy(erasureOf(ada, '2020-01-01T00:00:00.000Z'));
      await new Promise((resolve) => setTimeout(resolve, 5));
      const between = new Date();
      await other.destroy(erasureOf(customer1));
      // Erasing again changes nothing, its time neither.
      await store.destroy(erasureOf(ada, '2027-01-01T00:00:00.000Z'));
      expect(await other.destroyedSince(before, 10)).toEqual([
        erasureOf(ada, '2020-01-01T00:00:00.000Z'),
        erasureOf(customer1),
      ]);
      expect(await store.destroyedSince(between, 10)).toEqual([erasureOf(customer1)]);
      expect(await store.destroyedSince(before, 1)).toEqual([erasureOf(ada, '2020-01-01T00:00:00.000Z')]);
      expect(await store.destroyedSince(new Date(Date.now() + 1_000), 10)).toEqual([]);
    });

    it('lists the erasures in order of subject whatever order they were made in', async () => {
      const [c1, c2, c3] = [1, 2, 3].map((i): DataSubject => ({ kind: 'customer', id: `${i}` }));
      // Made out of order, so the order of subject is not the order they were written in.
      for (const subject of [c3, bob, c1, c2])
        await (subject === c1 ? other : store).destroy(erasureOf(subject));
      expect(await other.erasures(null, 10)).toEqual([c1, c2, c3, bob].map((subject) => erasureOf(subject)));
      expect(await store.erasures(subjectName(c1), 2)).toEqual([erasureOf(c2), erasureOf(c3)]);
      expect(await store.erasures(subjectName(c3), 2)).toEqual([erasureOf(bob)]);
    });

    it('tells which keys were destroyed since a time in order of destruction, not of making', async () => {
      await store.create(bob);
      await store.create(ada);
      const before = new Date(Date.now() - 1);
      await other.destroy(erasureOf(ada));
      await new Promise((resolve) => setTimeout(resolve, 5));
      await store.destroy(erasureOf(bob));
      expect(await other.destroyedSince(before, 10)).toEqual([erasureOf(ada), erasureOf(bob)]);
      expect(await store.destroyedSince(before, 1)).toEqual([erasureOf(ada)]);
    });

    it('ends erased when a create and a destroy of one subject race, and no key outlives the erasure', async () => {
      for (let round = 0; round < 10; round++) {
        const subject: DataSubject = { kind: 'customer', id: `race-${round}` };
        const outcomes = await Promise.allSettled([
          store.create(subject),
          other.destroy(erasureOf(subject)),
          other.create(subject),
        ]);
        for (const outcome of [outcomes[0], outcomes[2]]) {
          if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(SubjectErasedError);
        }
        expect(outcomes[1].status).toBe('fulfilled');
        expect((await store.get(subject))?.state).toBe('erased');
        expect(await backing.wrapped(subjectName(subject))).toBeNull();
      }
    });

    it('refuses to work under another secret than its keys were made under, naming DATA_KEY_SECRET', async () => {
      const key = await store.create(ada);
      const wrong = backing.open(OTHER_SECRET);
      try {
        for (const call of [
          () => wrong.get(ada),
          () => wrong.create(bob),
          () => wrong.destroy(erasureOf(ada)),
        ]) {
          await expect(call()).rejects.toThrow(ConfigError);
          await expect(call()).rejects.toThrow('DATA_KEY_SECRET is not the secret the data keys in');
        }
      } finally {
        await wrong.close();
      }
      // Nothing was changed by it.
      expect(await other.get(ada)).toEqual({ state: 'active', key });
      expect(await other.get(bob)).toBeNull();
    });

    it('keeps keys only wrapped, and no byte of a destroyed one in any spelling', async () => {
      // Several keys share a page, so a destroyed key's bytes would linger in a freed cell.
      const subjects = Array.from({ length: 12 }, (_, i): DataSubject => ({ kind: 'customer', id: `${i}` }));
      const keys = await Promise.all(subjects.map((subject) => store.create(subject)));
      const wrapped = await Promise.all(
        subjects.map(async (subject) => (await backing.wrapped(subjectName(subject)))!),
      );
      expect(wrapped.some((form, i) => form.includes(keys[i]))).toBe(false);
      const before = await backing.storedBytes();
      for (const form of keys.flatMap(spellings)) expect(before.includes(form)).toBe(false);
      // The scan finds what is there: every wrapped key, before its destruction.
      for (const form of wrapped) expect(before.includes(form)).toBe(true);

      for (const subject of subjects.slice(1)) await other.destroy(erasureOf(subject));
      const after = await backing.storedBytes();
      const gone = [...keys.slice(1), ...wrapped.slice(1)];
      for (const [i, form] of gone.flatMap(spellings).entries())
        expect({ i, found: after.includes(form) }).toEqual({ i, found: false });
      // The subject left has its key, wrapped, still.
      expect(after.includes(wrapped[0])).toBe(true);
      expect(await store.get(subjects[0])).toEqual({ state: 'active', key: keys[0] });
    });
  });
}

contract('SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'data-keys-'));
  return Promise.resolve({
    open: (secret = SECRET) => new SqliteDataKeyStore(dir, secret),
    storedBytes: () => Promise.resolve(filesUnder(dir)),
    wrapped: (name) => {
      const db = new Database(join(dir, DATA_KEYS_FILE), { readonly: true });
      try {
        const row = db.prepare('SELECT wrapped FROM data_keys WHERE subject = ?').get(name) as
          { wrapped: Buffer | null } | undefined;
        return Promise.resolve(row?.wrapped ?? null);
      } finally {
        db.close();
      }
    },
    dispose: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
  });
});

/** Every file under `dir`, one after the other. */
function filesUnder(dir: string): Buffer {
  return Buffer.concat(
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => readFileSync(join(entry.parentPath, entry.name))),
  );
}

let mongo: MongoDouble;
let databases = 0;
beforeAll(async () => {
  mongo = await startMongoDouble();
});
afterAll(() => mongo.stop());

contract('MongoDB', async () => {
  const uri = new URL(mongo.uri);
  const database = `data_keys${++databases}`;
  uri.pathname = `/${database}`;
  const client = await MongoClient.connect(mongo.uri);
  const db = client.db(database);
  return {
    open: (secret = SECRET) => new MongoDataKeyStore(uri.toString(), secret),
    storedBytes: async () => {
      const documents = [];
      for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
        documents.push(...(await db.collection(name).find().toArray()));
      }
      return Buffer.concat(documents.map((document) => BSON.serialize(document)));
    },
    wrapped: async (name) => {
      const document = await db
        .collection<{ _id: string; wrapped?: Binary }>('data_keys')
        .findOne({ _id: name });
      return document?.wrapped ? Buffer.from(document.wrapped.buffer) : null;
    },
    dispose: () => client.close(),
  };
});

describe('SQLite data key store, across processes', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'data-keys-processes-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const customers = (count: number) =>
    Array.from({ length: count }, (_, i): DataSubject => ({ kind: 'customer', id: `${i}` }));

  it('opens a key store written before destroys were stamped, adding the stamp and keeping every key', async () => {
    const first = new SqliteDataKeyStore(dir, SECRET);
    const key = await first.create(ada);
    await first.destroy(erasureOf(bob));
    await first.close();
    const db = new Database(join(dir, DATA_KEYS_FILE));
    db.exec('DROP INDEX data_keys_destroyed; ALTER TABLE data_keys DROP COLUMN destroyed_at');
    db.close();

    const [one, two] = [new SqliteDataKeyStore(dir, SECRET), new SqliteDataKeyStore(dir, SECRET)];
    expect(await Promise.all([one.create(ada), two.create(ada)])).toEqual([key, key]);
    expect((await two.get(bob))?.state).toBe('erased');
    await two.destroy(erasureOf(customer1));
    // The erasure made before the stamp is not polled (no process held its key since); the new one is.
    expect(await one.destroyedSince(new Date(0), 10)).toEqual([erasureOf(customer1)]);
    await Promise.all([one.close(), two.close()]);
  });

  it('makes one key per subject when two processes make them together', async () => {
    const subjects = customers(100);
    const outputs: string[][] = [[], []];
    // Both start together, once both have the store open.
    const ready: Array<{ stdin: NodeJS.WritableStream }> = [];
    const runs = [0, 1].map((n) =>
      spawnDataKeyWorker({ dataDir: dir, secret: SECRET, mode: 'create', subjects }, (line, child) => {
        if (line !== 'ready') return outputs[n].push(...(JSON.parse(line) as { keys: string[] }).keys);
        if (ready.push(child) === 2) for (const each of ready) each.stdin.end('go\n');
      }),
    );
    for (const run of await Promise.all(runs)) expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(outputs[0]).toHaveLength(100);
    expect(outputs[1]).toEqual(outputs[0]);
    const store = new SqliteDataKeyStore(dir, SECRET);
    try {
      const held = await store.getMany(subjects);
      expect(
        subjects.map((subject) => (held.get(subjectName(subject)) as { key: Buffer }).key.toString('hex')),
      ).toEqual(outputs[0]);
    } finally {
      await store.close();
    }
  });

  it('keeps every erasure that returned through a kill -9, none half made, no byte of a destroyed key left', async () => {
    const subjects = customers(200);
    const store = new SqliteDataKeyStore(dir, SECRET);
    const keys = await Promise.all(subjects.map((subject) => store.create(subject)));
    await store.close();
    const db = new Database(join(dir, DATA_KEYS_FILE), { readonly: true });
    const wrapped = subjects.map(
      (subject) =>
        (
          db.prepare('SELECT wrapped FROM data_keys WHERE subject = ?').get(subjectName(subject)) as {
            wrapped: Buffer;
          }
        ).wrapped,
    );
    db.close();

    const returned = new Set<string>();
    const run = await spawnDataKeyWorker(
      { dataDir: dir, secret: SECRET, mode: 'destroy', subjects },
      (line, child) => {
        returned.add(line);
        // Killed while it keeps destroying: the next destroy may be under way.
        if (returned.size === 60) child.kill('SIGKILL');
      },
    );
    expect(run.signal).toBe('SIGKILL');
    expect(returned.size).toBeGreaterThanOrEqual(60);
    expect(returned.size).toBeLessThan(200);

    const reopened = new SqliteDataKeyStore(dir, SECRET);
    try {
      const held = await reopened.getMany(subjects);
      const erased = new Set<number>();
      for (const [i, subject] of subjects.entries()) {
        const state = held.get(subjectName(subject))!;
        if (returned.has(subjectName(subject))) expect(state.state).toBe('erased');
        if (state.state === 'erased') erased.add(i);
        else expect(state.key.equals(keys[i])).toBe(true);
      }
      expect(erased.size).toBeGreaterThanOrEqual(returned.size);
      // Every file left (a journal SQLite did not need, when killed before its header was synced,
      // is left until the next write) holds no byte of a destroyed key, and every other key.
      const scan = () => {
        const bytes = filesUnder(dir);
        for (const i of subjects.keys()) {
          if (!erased.has(i)) expect(bytes.includes(wrapped[i])).toBe(true);
          else
            for (const form of [...spellings(keys[i]), ...spellings(wrapped[i])])
              expect(bytes.includes(form)).toBe(false);
        }
      };
      expect(readdirSync(dir).filter((file) => file !== `${DATA_KEYS_FILE}-journal`)).toEqual([
        DATA_KEYS_FILE,
      ]);
      scan();
      // The interrupted erasure, retried, is whole, and leaves no journal.
      const next = subjects.findIndex((_, i) => !erased.has(i));
      await reopened.destroy(erasureOf(subjects[next]));
      erased.add(next);
      expect(readdirSync(dir)).toEqual([DATA_KEYS_FILE]);
      scan();
    } finally {
      await reopened.close();
    }
  });
});

describe('MongoDB data key store, its concerns', () => {
  let double: MongoDouble;
  const seen: Array<{ db: string; command: Record<string, any> }> = [];
  /** Commands that the double drops the connection on, as a server dying then would. */
  let failing: (db: string, command: Record<string, any>) => boolean = () => false;
  beforeAll(async () => {
    double = await startMongoDouble({
      onCommand: (db, command) => {
        seen.push({ db, command });
        if (failing(db, command)) throw new Error('the server went away');
      },
    });
  });
  afterEach(() => {
    failing = () => false;
  });
  afterAll(() => double.stop());

  it('writes with majority and journal, reads what a majority holds, in the database the URI names', async () => {
    const store = new MongoDataKeyStore(double.uri.replace('/?', '/concerns?'), SECRET);
    try {
      await store.create(ada);
      await store.get(ada);
      await store.destroy(erasureOf(ada));
      await store.erasures(null, 10);
    } finally {
      await store.close();
    }
    const ours = seen.filter((entry) => entry.db === 'concerns');
    const writes = ours.filter((entry) =>
      ['insert', 'update', 'delete'].includes(Object.keys(entry.command)[0]),
    );
    const reads = ours.filter((entry) => Object.keys(entry.command)[0] === 'find');
    expect(writes.length).toBeGreaterThanOrEqual(3);
    for (const { command } of writes) {
      expect(command[Object.keys(command)[0]]).toBe('data_keys');
      expect(command.writeConcern).toEqual({ w: 'majority', j: true });
    }
    expect(reads.length).toBeGreaterThanOrEqual(3);
    for (const { command } of reads) expect(command.readConcern).toEqual({ level: 'majority' });
  });

  it('passes an outage through, never taking it for a key made or an erasure recorded, and works once it ends', async () => {
    const store = new MongoDataKeyStore(double.uri.replace('/?', '/outage?'), SECRET);
    try {
      // The secret's check itself, then a key's insert, then an erasure's update.
      failing = (db) => db === 'outage';
      await expect(store.create(ada)).rejects.toThrow();
      failing = (db, command) =>
        db === 'outage' && 'insert' in command && command.documents?.[0]?._id !== '#secret-check';
      await expect(store.create(ada)).rejects.not.toBeInstanceOf(SubjectErasedError);
      await expect(store.createMany([ada, bob])).rejects.toThrow();
      failing = () => false;
      expect(await store.get(ada)).toBeNull();
      failing = (db, command) => db === 'outage' && 'insert' in command;
      failing = (db, command) => db === 'outage' && 'update' in command;
      await expect(store.destroy(erasureOf(bob))).rejects.toThrow();
      failing = () => false;
      expect(await store.get(bob)).toBeNull();
      const key = await store.create(ada);
      expect(await store.get(ada)).toEqual({ state: 'active', key });
      expect(await store.destroy(erasureOf(bob))).toEqual(erasureOf(bob));
    } finally {
      await store.close();
    }
  });
});

describe('MongoDB data key store, its collection and the writes it meets', () => {
  let double: MongoDouble;
  let client: MongoClient;
  /** Sees, and may change, every command before the double runs it. */
  let meddle: (db: string, command: Record<string, any>) => void = () => {};
  const stores: DataKeyStore[] = [];
  const open = (database: string, secret = SECRET) => {
    const store = new MongoDataKeyStore(double.uri.replace('/?', `/${database}?`), secret);
    stores.push(store);
    return store;
  };
  /**
   * The server refuses, with a write error that is not a duplicate key (121), every key document
   * that `validator` does not match; `{}` lifts it.
   */
  const validate = (database: string, validator: Record<string, unknown>) =>
    client.db(database).command({ collMod: 'data_keys', validator });
  /** A unique index on `id` holding `ids`: a duplicate key that no subject's key causes. */
  const strayIds = async (database: string, ids: string[]) => {
    const keys = client.db(database).collection<{ _id: string }>('data_keys');
    await keys.createIndex({ id: 1 }, { unique: true, partialFilterExpression: { id: { $exists: true } } });
    await keys.insertMany(ids.map((id) => ({ _id: `stray-${id}`, id })));
  };

  beforeAll(async () => {
    double = await startMongoDouble({ onCommand: (db, command) => meddle(db, command) });
    client = await MongoClient.connect(double.uri);
  });
  afterEach(async () => {
    meddle = () => {};
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });
  afterAll(async () => {
    await client.close();
    await double.stop();
  });

  it('keeps the keys and its secret check in data_keys, the check under #secret-check', async () => {
    const store = open('layout');
    await store.create(ada);
    await store.destroy(erasureOf(bob));
    const documents = await client.db('layout').collection<{ _id: string }>('data_keys').find().toArray();
    expect(documents.map((document) => document._id).sort()).toEqual(
      ['#secret-check', subjectName(ada), subjectName(bob)].sort(),
    );
    expect(documents.find((document) => document._id === '#secret-check')).toEqual({
      _id: '#secret-check',
      check: expect.any(String),
    });
    // Another secret is refused naming where the keys are.
    await expect(open('layout', OTHER_SECRET).get(ada)).rejects.toThrow(
      "DATA_KEY_SECRET is not the secret the data keys in MongoDB's layout.data_keys were made under",
    );
  });

  it('uses the chronicle database when the URI names none', async () => {
    const store = new MongoDataKeyStore(double.uri, SECRET);
    stores.push(store);
    await store.create(ada);
    expect(
      await client
        .db('chronicle')
        .collection('data_keys')
        .countDocuments({ _id: subjectName(ada) } as any),
    ).toBe(1);
  });

  it('indexes only the destroyed keys by their destruction, for the poll', async () => {
    await open('indexed').get(ada);
    const indexes = await client.db('indexed').collection('data_keys').listIndexes().toArray();
    expect(indexes).toContainEqual(
      expect.objectContaining({
        name: 'data_keys_destroyed',
        key: { destroyedAt: 1 },
        partialFilterExpression: { destroyedAt: { $exists: true } },
      }),
    );
  });

  it('finds its secret check among keys restored in any order', async () => {
    const origin = open('origin');
    const key = await origin.create(ada);
    await origin.destroy(erasureOf(bob));
    // A restore need not keep the order the documents were written in: here the check comes last.
    const documents = await client.db('origin').collection('data_keys').find().toArray();
    await client.db('restored').collection('data_keys').insertMany(documents.reverse());
    const restored = open('restored');
    expect(await restored.get(ada)).toEqual({ state: 'active', key });
    expect(await restored.get(bob)).toEqual({ state: 'erased', erasure: erasureOf(bob) });
  });

  it('makes the keys of new subjects in one insert, a subject named twice once, and reads nothing back', async () => {
    const store = open('once');
    await store.get(ada);
    const commands: Array<Record<string, any>> = [];
    meddle = (db, command) => {
      if (db === 'once') commands.push(command);
    };
    const made = await store.createMany([ada, bob, ada]);
    expect(commands.map((command) => Object.keys(command)[0])).toEqual(['insert']);
    expect(commands[0].documents.map((document: { _id: string }) => document._id)).toEqual([
      subjectName(ada),
      subjectName(bob),
    ]);
    expect([...made.keys()]).toEqual([subjectName(ada), subjectName(bob)]);
    meddle = () => {};
    expect(await store.getMany([ada, bob])).toEqual(made);
  });

  it('throws the write error of a key refused beside one made by another instance, making no key of it', async () => {
    const [store, other] = [open('refused-insert'), open('refused-insert')];
    const adaKey = await other.create(ada);
    await validate('refused-insert', { _id: { $ne: subjectName(bob) } });
    // Ada's duplicate key alone would be taken from the store: bob's refusal is not.
    const failure = store.createMany([ada, bob]);
    await expect(failure).rejects.toBeInstanceOf(MongoBulkWriteError);
    await expect(failure).rejects.toMatchObject({
      writeErrors: expect.arrayContaining([expect.objectContaining({ code: 121 })]),
    });
    await validate('refused-insert', {});
    expect(await other.get(bob)).toBeNull();
    // Once accepted, the key another instance made is taken.
    const made = await store.createMany([ada, bob]);
    expect(made.get(subjectName(ada))).toEqual({ state: 'active', key: adaKey });
    expect(made.get(subjectName(bob))).toEqual(await other.get(bob));
  });

  it('names the keys reported as made before that it cannot find, never handing out one not stored', async () => {
    const [store, other] = [open('lost'), open('lost')];
    await other.create(ada);
    // Duplicate keys, but of another index than the subject's: those keys exist nowhere.
    await strayIds('lost', ['1', '2']);
    const c2: DataSubject = { kind: 'customer', id: '2' };
    await expect(store.createMany([ada, customer1, c2])).rejects.toThrow(
      /^The data keys of customer-1, customer-2 were neither made nor found$/,
    );
    expect(await other.getMany([customer1, c2])).toEqual(new Map());
  });

  it('throws the error of an erasure refused, leaving the key', async () => {
    const store = open('refused-update');
    const key = await store.create(ada);
    await validate('refused-update', { destroyedAt: { $exists: false } });
    await expect(store.destroy(erasureOf(ada))).rejects.toMatchObject({ code: 121 });
    await validate('refused-update', {});
    expect(await store.get(ada)).toEqual({ state: 'active', key });
  });

  it('names an erasure met by a duplicate key yet not found', async () => {
    const store = open('lost-erasure');
    await store.get(ada);
    await strayIds('lost-erasure', ['1']);
    await expect(store.destroy(erasureOf(customer1))).rejects.toThrow(
      /^The erasure of customer-1 was neither made nor found$/,
    );
    expect(await store.get(customer1)).toBeNull();
  });

  it('throws the error of its secret check refused, and checks it once accepted', async () => {
    const store = open('refused-check');
    await client.db('refused-check').createCollection('data_keys');
    await validate('refused-check', { _id: { $ne: '#secret-check' } });
    await expect(store.get(ada)).rejects.toMatchObject({ code: 121 });
    await validate('refused-check', {});
    expect(await store.get(ada)).toBeNull();
    await expect(open('refused-check', OTHER_SECRET).get(ada)).rejects.toThrow(ConfigError);
  });
});
