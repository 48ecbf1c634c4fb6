import Database from 'better-sqlite3';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventSchemaOf } from '@chronicle/domain';
import { SqliteDataKeyStore } from '../embedded/sqlite-data-key-store';
import { SqliteEventStore } from '../embedded/sqlite-event-store';
import { HistoryBrokenError, type HistoryRewrite } from '../integrity/history-rewrite';
import { EventStore, RecordedEvent } from '../event-store.port';
import { verifyChain } from '../integrity';
import { newEvent } from '../new-event.spec-helper';
import { DataKeyRing } from './data-key-ring';
import { PersonalDataEventStore } from './personal-data-event-store';
import {
  plaintextPatched as patched,
  plaintextRegistered as registered,
} from './plaintext-events.spec-helper';

const SECRET = Buffer.from('the data key secret of this spec, long enough');
const ada = '0190a1b2-0000-7000-8000-0000000000a1';
const bob = '0190a1b2-0000-7000-8000-0000000000b2';

/** `history protect` as the CLI runs it: the embedded store's rewrite, the personal-data store's encryption. */
describe('history protect: SqliteEventStore.rewriteHistory with PersonalDataEventStore.protectStored', () => {
  let dataDir: string;
  let adapter: SqliteEventStore;
  let keyStore: SqliteDataKeyStore;
  let store: PersonalDataEventStore;

  const protect: HistoryRewrite = {
    rewrite: (events) => store.protectStored(events),
    record: (summary) => ({
      stream: 'historyprotection',
      event: newEvent('HistoryProtected.v1', { ...summary }),
    }),
  };

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'history-protect-'));
    adapter = SqliteEventStore.open(dataDir, { readBatchSize: 2 });
    keyStore = new SqliteDataKeyStore(dataDir, SECRET);
    store = new PersonalDataEventStore(
      adapter,
      new DataKeyRing(keyStore),
      (type) => eventSchemaOf(type)?.personal,
    );
    // As an older build wrote them: plaintext, no marker. Pages of two: the rewrite crosses pages.
    await adapter.append('session-1', [newEvent('SessionEnded.v1', { sessionId: '1' })], 'any');
    await adapter.append(`user-${ada}`, [registered(ada, 'Zoë Plainwood')], 'no_stream');
    await adapter.append(`user-${bob}`, [registered(bob, 'Bört Plainwood')], 'no_stream');
    await adapter.append(`user-${ada}`, [patched(ada, 'Ada Plainwood-King')], 0);
    await adapter.append('session-2', [newEvent('SessionEnded.v1', { sessionId: '2' })], 'any');
  });

  afterEach(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const storedBytes = () =>
    Buffer.concat(
      readdirSync(dataDir)
        .filter((file) => file.startsWith('events.db'))
        .map((file) => readFileSync(join(dataDir, file))),
    );
  async function all(from: EventStore): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    for await (const event of from.readAll()) events.push(event);
    return events;
  }

  it('encrypts every plaintext value, re-chains from the first changed event, and records both heads', async () => {
    const before = await verifyChain(adapter.readChain(), 'log');
    const plainRead = (await all(store)).map((event) => event.data);
    const firstHash = (await all(adapter))[0].hash;

    const done = await adapter.rewriteHistory(protect);

    expect(done).toEqual({
      oldHead: before.head,
      newHead: {
        position: '5',
        recordedAt: before.head!.recordedAt,
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
      firstChanged: '2',
      changed: 3,
      erased: 0,
      recorded: { commit: 6n, prepare: 6n },
    });
    expect(done!.newHead.hash).not.toBe(before.head!.hash);
    for (const name of ['Zoë Plainwood', 'Bört Plainwood', 'Ada Plainwood-King', 'Plainwood']) {
      expect(storedBytes().includes(Buffer.from(name))).toBe(false);
    }
    const stored = await all(adapter);
    expect(stored.map((event) => event.metadata.personalData)).toEqual([
      undefined,
      'encrypted',
      'encrypted',
      'encrypted',
      undefined,
      undefined,
    ]);
    expect(stored[1].data.name).toMatch(/^p1\./);
    // The first event is untouched, hash and all; the rest are chained anew, and the chain holds.
    expect(stored[0].hash).toBe(firstHash);
    const after = await verifyChain(adapter.readChain(), 'log');
    expect(after).toMatchObject({ broken: null, events: 6 });
    expect(stored[4].hash).toBe(done!.newHead.hash);
    expect(stored[5]).toMatchObject({ stream: 'historyprotection', type: 'HistoryProtected.v1' });
    // Read back as they were written.
    expect((await all(store)).slice(0, 5).map((event) => event.data)).toEqual(plainRead);
  });

  it('is idempotent: a second run finds nothing to protect and writes nothing', async () => {
    await adapter.rewriteHistory(protect);
    const head = await verifyChain(adapter.readChain(), 'log');

    expect(await adapter.rewriteHistory(protect)).toBeNull();
    expect(await verifyChain(adapter.readChain(), 'log')).toEqual(head);
  });

  it("makes an erased subject's plaintext values null, marked erased", async () => {
    await keyStore.destroy({ subject: { kind: 'user', id: bob }, erasedAt: '2026-11-27T01:00:00.000Z' });

    expect(await adapter.rewriteHistory(protect)).toMatchObject({ changed: 3, erased: 1 });

    const [bobs] = await adapter.readStream(`user-${bob}`);
    expect(bobs.data).toMatchObject({ name: null, age: null });
    expect(bobs.metadata.personalData).toBe('erased');
    expect((await store.readStream(`user-${bob}`))[0]).toMatchObject({ erased: true, data: { name: null } });
    expect(storedBytes().includes(Buffer.from('Bört Plainwood'))).toBe(false);
  });

  it('rewrites nothing over a broken chain', async () => {
    const db = new Database(join(dataDir, 'events.db'));
    db.exec('DROP TRIGGER events_no_update');
    db.prepare('UPDATE events SET data = replace(data, \'"1"\', \'"9"\') WHERE position = 1').run();
    db.exec("CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'no'); END");
    db.close();

    await expect(adapter.rewriteHistory(protect)).rejects.toThrow(HistoryBrokenError);

    expect(storedBytes().includes(Buffer.from('Zoë Plainwood'))).toBe(true);
    expect((await adapter.readStream(`user-${ada}`))[0].metadata.personalData).toBeUndefined();
  });

  it('leaves the history as it was when it fails before its commit, append-only still', async () => {
    const before = await verifyChain(adapter.readChain(), 'log');
    const failing: HistoryRewrite = {
      ...protect,
      record: () => {
        throw new Error('the disk is full');
      },
    };

    await expect(adapter.rewriteHistory(failing)).rejects.toThrow('the disk is full');

    expect(await verifyChain(adapter.readChain(), 'log')).toEqual(before);
    expect((await adapter.readStream(`user-${ada}`))[0].data.name).toBe('Zoë Plainwood');
    const db = new Database(join(dataDir, 'events.db'));
    try {
      expect(() => db.prepare("UPDATE events SET type = 'X' WHERE position = 1").run()).toThrow(
        'events are append-only',
      );
    } finally {
      db.close();
    }
    // And the store goes on appending, chained to the head as it was.
    await adapter.append('session-3', [newEvent('SessionEnded.v1', { sessionId: '3' })], 'any');
    expect(await verifyChain(adapter.readChain(), 'log')).toMatchObject({ broken: null, events: 6 });
  });
});
