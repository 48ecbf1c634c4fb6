import crypto from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventSchemaOf } from '@chronicle/domain';
import { SqliteDataKeyStore } from '../embedded/sqlite-data-key-store';
import { SqliteEventStore } from '../embedded/sqlite-event-store';
import { EventStore, RecordedEvent } from '../event-store.port';
import { verifyChain } from '../integrity';
import { newEvent } from '../new-event.spec-helper';
import { UnreadableCiphertextError } from './aes-gcm';
import { DataKeyRing } from './data-key-ring';
import { DataKeyStore, SubjectErasedError } from './data-key-store.port';
import { PersonalDataEventStore } from './personal-data-event-store';

const SECRET = Buffer.from('the data key secret of this spec, long enough');
const userId = '0190a1b2-0000-7000-8000-0000000000a1';
const ada = { kind: 'user', id: userId } as const;

describe('PersonalDataEventStore', () => {
  let dataDir: string;
  let adapter: SqliteEventStore;
  let keyStore: DataKeyStore;
  let store: PersonalDataEventStore;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'personal-data-'));
    adapter = SqliteEventStore.open(dataDir);
    keyStore = new SqliteDataKeyStore(dataDir, SECRET);
    store = new PersonalDataEventStore(
      adapter,
      new DataKeyRing(keyStore),
      (type) => eventSchemaOf(type)?.personal,
    );
  });

  afterEach(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const registered = newEvent('UserRegistered.v2', {
    userId,
    accountId: null,
    name: 'Zoë Lovelace',
    age: 36,
    createdon: '2026-11-27T00:00:00.000Z',
  });
  const patched = newEvent('UserPatched.v1', {
    userId,
    changes: { name: 'Ada King' },
    modifiedon: '2026-11-27T00:01:00.000Z',
  });

  async function all(from: EventStore): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    for await (const event of from.readAll()) events.push(event);
    return events;
  }

  /** Every byte under the data directory, as written. */
  const storedBytes = () =>
    Buffer.concat(readdirSync(dataDir).map((file) => readFileSync(join(dataDir, file))));

  it('stores personal values encrypted and reads them back as written, on every read path', async () => {
    await store.append(`user-${userId}`, [registered, patched], 'no_stream');

    const stored = await adapter.readStream(`user-${userId}`);
    expect(stored[0].data).toEqual({
      ...registered.data,
      name: expect.stringMatching(/^p1\./),
      age: expect.stringMatching(/^p1\./),
    });
    expect(stored[1].data).toEqual({ ...patched.data, changes: { name: expect.stringMatching(/^p1\./) } });
    expect(stored.map((event) => event.metadata.personalData)).toEqual(['encrypted', 'encrypted']);
    for (const text of ['Zoë Lovelace', 'Ada King']) {
      expect(storedBytes().includes(Buffer.from(text))).toBe(false);
    }

    const read = await store.readStream(`user-${userId}`);
    expect(read.map((event) => event.data)).toEqual([registered.data, patched.data]);
    expect((await all(store)).map((event) => event.data)).toEqual([registered.data, patched.data]);
    const page = await store.queryLog({ limit: 10 });
    expect(page.events.map((event) => event.data)).toEqual([registered.data, patched.data]);
    expect(read.every((event) => event.erased === undefined)).toBe(true);
  });

  it('delivers decrypted events to subscriptions, history and live', async () => {
    await store.append(`user-${userId}`, [registered], 'no_stream');
    const subscription = store.subscribeToAll();
    const seen: unknown[] = [];
    const done = (async () => {
      for await (const message of subscription) {
        if (message.kind !== 'event') continue;
        seen.push(message.event.data);
        if (seen.length === 2) break;
      }
    })();
    await store.append(`user-${userId}`, [patched], 0);
    await done;
    expect(seen).toEqual([registered.data, patched.data]);
  });

  it('decrypts a catch-up many events at a time, asking the key store once per batch, then live events one by one', async () => {
    const customers = Array.from({ length: 300 }, (_, i) =>
      newEvent('CustomerRegistered.v1', {
        customerId: i + 1,
        name: `Customer ${i + 1}`,
        email: `c${i + 1}@example.com`,
        createdon: '2026-11-27T00:00:00.000Z',
      }),
    );
    await Promise.all(customers.map((event, i) => store.append(`customer-${i + 1}`, [event], 'no_stream')));
    // Another process: nothing of these keys in its memory.
    const cold = new PersonalDataEventStore(
      adapter,
      new DataKeyRing(keyStore),
      (type) => eventSchemaOf(type)?.personal,
    );
    const getMany = jest.spyOn(keyStore, 'getMany');
    const subscription = cold.subscribeToAll();
    const seen: unknown[] = [];
    let live: Promise<unknown> | null = null;
    for await (const message of subscription) {
      if (message.kind === 'caught-up') {
        expect(seen).toEqual(customers.map((event) => event.data));
        expect(getMany.mock.calls.length).toBeLessThanOrEqual(3);
        live = store.append(
          'customer-301',
          [newEvent('CustomerRegistered.v1', { ...customers[0].data, customerId: 301 })],
          'no_stream',
        );
        continue;
      }
      if (message.kind !== 'event') continue;
      seen.push(message.event.data);
      if (seen.length === 301) break;
    }
    await live;
    expect(seen[300]).toEqual({ ...customers[0].data, customerId: 301 });
  });

  it('works out whose each event is once per event, on an append and on a read', async () => {
    const subjects: string[] = [];
    const counted = new PersonalDataEventStore(adapter, new DataKeyRing(keyStore), (type) => {
      const personal = eventSchemaOf(type)?.personal;
      return (
        personal && {
          ...personal,
          subject: (data) => {
            subjects.push(type);
            return personal.subject(data);
          },
        }
      );
    });
    const opened = newEvent('AccessTokenIssued.v1', { accountId: 'a-1', tokenId: 't-1' });
    await counted.append(`user-${userId}`, [registered, opened, patched], 'no_stream');
    expect(subjects).toEqual(['UserRegistered.v2', 'UserPatched.v1']);

    subjects.length = 0;
    expect((await counted.readStream(`user-${userId}`)).map((event) => event.data)).toEqual([
      registered.data,
      opened.data,
      patched.data,
    ]);
    expect(subjects).toEqual(['UserRegistered.v2', 'UserPatched.v1']);
  });

  it('reads an erased subject as nulls marked erased, while the chain over the ciphertext still verifies', async () => {
    await store.append(`user-${userId}`, [registered, patched], 'no_stream');
    await keyStore.destroy({ subject: ada, erasedAt: '2026-11-27T01:00:00.000Z' });
    // Another instance, whose memory held no key: the store says the subject is erased.
    const elsewhere = new PersonalDataEventStore(
      adapter,
      new DataKeyRing(keyStore),
      (type) => eventSchemaOf(type)?.personal,
    );

    const read = await elsewhere.readStream(`user-${userId}`);
    expect(read.map((event) => event.erased)).toEqual([true, true]);
    expect(read[0].data).toEqual({ ...registered.data, name: null, age: null });
    expect(read[1].data).toEqual({ ...patched.data, changes: { name: null } });
    expect(JSON.stringify(read.map((event) => event.data))).not.toMatch(/p1\./);
    expect((await verifyChain(adapter.readChain(), adapter.chainScope)).broken).toBeNull();
  });

  describe('what this process sealed itself', () => {
    const bobId = '0190a1b2-0000-7000-8000-0000000000b2';
    const bobRegistered = newEvent('UserRegistered.v2', { ...registered.data, userId: bobId, name: 'Bob' });

    it('reads it back without opening it again (a PATCH read back by its own projection)', async () => {
      await store.append(`user-${userId}`, [registered, patched], 'no_stream');
      const opened = jest.spyOn(crypto, 'createDecipheriv');
      try {
        expect((await store.readStream(`user-${userId}`)).map((event) => event.data)).toEqual([
          registered.data,
          patched.data,
        ]);
        expect(opened).not.toHaveBeenCalled();
        // Another process (or this one after a restart) opens the same values: all three.
        const cold = new PersonalDataEventStore(adapter, store.keys, (type) => eventSchemaOf(type)?.personal);
        expect((await cold.readStream(`user-${userId}`))[1].data).toEqual(patched.data);
        expect(opened).toHaveBeenCalledTimes(3);
      } finally {
        opened.mockRestore();
      }
    });

    it('still reads nulls once the subject is erased', async () => {
      await store.append(`user-${userId}`, [registered, patched], 'no_stream');
      await store.keys.destroy({ subject: ada, erasedAt: '2026-11-27T01:00:00.000Z' });

      const read = await store.readStream(`user-${userId}`);
      expect(read.map((event) => event.erased)).toEqual([true, true]);
      expect(JSON.stringify(read.map((event) => event.data))).not.toContain('Ada King');
    });

    it("still refuses a sealed value copied into another subject's event", async () => {
      await store.append(`user-${userId}`, [registered, patched], 'no_stream');
      await store.append(`user-${bobId}`, [bobRegistered], 'no_stream');
      const [, stored] = await adapter.readStream(`user-${userId}`);
      const copied = newEvent('UserPatched.v1', {
        userId: bobId,
        changes: stored.data.changes,
        modifiedon: '2026-11-27T00:02:00.000Z',
      });
      await adapter.append(
        `user-${bobId}`,
        [{ ...copied, metadata: { ...copied.metadata, personalData: 'encrypted' } }],
        0,
      );

      await expect(store.readStream(`user-${bobId}`)).rejects.toBeInstanceOf(UnreadableCiphertextError);
    });
  });

  it('refuses to write about an erased subject', async () => {
    await keyStore.destroy({ subject: ada, erasedAt: '2026-11-27T01:00:00.000Z' });
    await expect(store.append(`user-${userId}`, [registered], 'no_stream')).rejects.toBeInstanceOf(
      SubjectErasedError,
    );
    expect(await adapter.readStream(`user-${userId}`)).toEqual([]);
  });

  it('shows events written before encryption as stored, or erased once their subject is', async () => {
    await adapter.append(`user-${userId}`, [registered], 'no_stream');
    expect((await store.readStream(`user-${userId}`))[0].data).toEqual(registered.data);
    await keyStore.destroy({ subject: ada, erasedAt: '2026-11-27T01:00:00.000Z' });
    const fresh = new PersonalDataEventStore(
      adapter,
      new DataKeyRing(keyStore),
      (type) => eventSchemaOf(type)?.personal,
    );
    const [event] = await fresh.readStream(`user-${userId}`);
    expect(event.data).toEqual({ ...registered.data, name: null, age: null });
    expect(event.erased).toBe(true);
  });

  it('leaves events without personal values untouched, and makes one key per subject for concurrent appends', async () => {
    const other = newEvent('Tested.v1', { name: 'not personal here' });
    await store.append('other-1', [other], 'no_stream');
    expect((await adapter.readStream('other-1'))[0].data).toEqual(other.data);

    const createMany = jest.spyOn(keyStore, 'createMany');
    const customers = Array.from({ length: 20 }, (_, i) =>
      newEvent('CustomerRegistered.v1', {
        customerId: i + 1,
        name: `Customer ${i + 1}`,
        email: `c${i + 1}@example.com`,
        createdon: '2026-11-27T00:00:00.000Z',
      }),
    );
    await Promise.all(customers.map((event, i) => store.append(`customer-${i + 1}`, [event], 'no_stream')));
    expect(createMany).toHaveBeenCalledTimes(1);
    expect(createMany.mock.calls[0][0]).toHaveLength(20);
    const read = await all(store);
    expect(read.slice(1).map((event) => event.data)).toEqual(customers.map((event) => event.data));
  });

  it('names the subject when events are encrypted under a key the key store no longer has', async () => {
    await store.append(`user-${userId}`, [registered], 'no_stream');
    const emptyDir = mkdtempSync(join(tmpdir(), 'personal-data-keys-'));
    const lost = new PersonalDataEventStore(
      adapter,
      new DataKeyRing(new SqliteDataKeyStore(emptyDir, SECRET)),
      (type) => eventSchemaOf(type)?.personal,
    );
    try {
      await expect(lost.readStream(`user-${userId}`)).rejects.toThrow(
        new RegExp(`data key of user-${userId} is missing`),
      );
    } finally {
      rmSync(emptyDir, { recursive: true, force: true });
    }
  });
});
