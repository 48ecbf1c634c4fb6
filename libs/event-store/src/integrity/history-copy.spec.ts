import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventSchemaOf } from '@chronicle/domain';
import { EsdbDouble, startEsdbDouble } from '../../../../test/doubles/esdb/esdb-double';
import { SqliteDataKeyStore } from '../embedded/sqlite-data-key-store';
import { EsdbEventStore } from '../esdb/esdb-event-store';
import { toChainLink } from '../esdb/esdb-events';
import type { EventStore, RecordedEvent } from '../event-store.port';
import { newEvent } from '../new-event.spec-helper';
import { formatPosition } from '../position';
import { DataKeyRing } from '../personal-data/data-key-ring';
import { PersonalDataEventStore } from '../personal-data/personal-data-event-store';
import {
  plaintextPatched as patched,
  plaintextRegistered as registered,
} from '../personal-data/plaintext-events.spec-helper';
import { verifyChain } from './chain-verifier';
import { copyHistory, HistoryCopyError } from './history-copy';
import { HistoryBrokenError, type HistoryRewrite } from './history-rewrite';

const SECRET = Buffer.from('the data key secret of this spec, long enough');
const ada = '0190a1b2-0000-7000-8000-0000000000a1';
const bob = '0190a1b2-0000-7000-8000-0000000000b2';
const RECORD = 'HistoryProtected.v1';

async function all(from: EventStore): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  for await (const event of from.readAll()) events.push(event);
  return events;
}

/** `history protect --to` as the CLI runs it: two EventStoreDB databases, the personal-data store's encryption. */
describe('copyHistory: a history copied, protected, into a new database', () => {
  let doubles: EsdbDouble[];
  let source: EsdbEventStore;
  let target: EsdbEventStore;
  let keyDir: string;
  let keyStore: SqliteDataKeyStore;
  let protector: PersonalDataEventStore;
  const protect: HistoryRewrite = {
    rewrite: (events) => protector.protectStored(events),
    record: (summary) => ({ stream: 'historyprotection', event: newEvent(RECORD, { ...summary }) }),
  };
  const copy = (into: EventStore = target, rewrite: HistoryRewrite = protect) =>
    copyHistory(source, into, rewrite, RECORD);

  beforeEach(async () => {
    doubles = await Promise.all([startEsdbDouble(), startEsdbDouble()]);
    source = EsdbEventStore.connect(doubles[0].connectionString);
    target = EsdbEventStore.connect(doubles[1].connectionString);
    keyDir = mkdtempSync(join(tmpdir(), 'history-copy-'));
    keyStore = new SqliteDataKeyStore(keyDir, SECRET);
    const keys = new DataKeyRing(keyStore);
    protector = new PersonalDataEventStore(target, keys, (type) => eventSchemaOf(type)?.personal);
    // As an older build wrote them (plaintext, no marker), and one the current build wrote, encrypted.
    const encrypting = new PersonalDataEventStore(source, keys, (type) => eventSchemaOf(type)?.personal);
    await source.append('session-1', [newEvent('SessionEnded.v1', { sessionId: '1' })], 'no_stream');
    await source.append(`user-${ada}`, [registered(ada, 'Zoë Copywood')], 'no_stream');
    await source.append(`user-${bob}`, [registered(bob, 'Bört Copywood')], 'no_stream');
    await source.append(`user-${ada}`, [patched(ada, 'Ada Copywood-King'), patched(ada, 'Ada C. King')], 0);
    await encrypting.append(`user-${bob}`, [patched(bob, 'Bob Sealed')], 0);
    await source.append('session-1', [newEvent('SessionEnded.v1', { sessionId: '2' })], 0);
  });

  afterEach(async () => {
    await Promise.all([protector.close(), source.close()]);
    await Promise.all(doubles.map((double) => double.stop()));
    rmSync(keyDir, { recursive: true, force: true });
  });

  it('copies every event in order, encrypts the plaintext values, chains the copy, and records both heads last', async () => {
    const before = await verifyChain(source.readChain(), 'stream');
    const original = await all(source);

    const done = await copy();

    const copied = await all(target);
    const record = copied.pop()!;
    expect(copied.map(({ id, stream, revision, type }) => ({ id, stream, revision, type }))).toEqual(
      original.map(({ id, stream, revision, type }) => ({ id, stream, revision, type })),
    );
    expect(copied.map((event) => event.metadata.personalData)).toEqual([
      undefined,
      'encrypted',
      'encrypted',
      'encrypted',
      'encrypted',
      'encrypted',
      undefined,
    ]);
    // Already encrypted: copied as it was, byte for byte.
    expect(copied[5].data).toEqual(original[5].data);
    const stored = JSON.stringify(copied.map((event) => event.data));
    for (const name of ['Zoë Copywood', 'Bört Copywood', 'Ada Copywood-King', 'Ada C. King', 'Bob Sealed']) {
      expect(stored).not.toContain(name);
    }
    // Read through the store, as the API on the new database will: the same values as the source's.
    const reading = (store: EventStore) =>
      all(new PersonalDataEventStore(store, protector.keys, (type) => eventSchemaOf(type)?.personal));
    expect((await reading(target)).slice(0, 7).map((event) => event.data)).toEqual(
      (await reading(source)).map((event) => event.data),
    );

    const after = await verifyChain(target.readChain(), 'stream');
    expect(after.broken).toBeNull();
    const newHead = (await verifyChain(copied.map(toChainLink), 'stream')).head;
    expect(done).toEqual({
      oldHead: before.head,
      newHead,
      firstChanged: formatPosition(original[1].position),
      changed: 4,
      erased: 0,
      recorded: record.position,
      copied: 7,
      resumed: 0,
    });
    expect(newHead!.hash).not.toBe(before.head!.hash);
    expect(record).toMatchObject({
      type: RECORD,
      stream: 'historyprotection',
      data: { oldHead: before.head },
    });
  });

  it('finds nothing to do once the copy is complete, and writes nothing', async () => {
    await copy();
    const copied = await all(target);

    expect(await copy()).toBeNull();

    expect(await all(target)).toEqual(copied);
  });

  it('makes the plaintext values of an erased subject null, marked erased', async () => {
    await keyStore.destroy({ subject: { kind: 'user', id: ada }, erasedAt: '2026-11-27T01:00:00.000Z' });

    const done = await copy();

    expect(done).toMatchObject({ changed: 4, erased: 3 });
    const adas = (await target.readStream(`user-${ada}`)).map((event) => [
      event.data,
      event.metadata.personalData,
    ]);
    expect(adas).toEqual([
      [expect.objectContaining({ name: null, age: null }), 'erased'],
      [expect.objectContaining({ changes: { name: null } }), 'erased'],
      [expect.objectContaining({ changes: { name: null } }), 'erased'],
    ]);
  });

  it('resumes a copy cut short after the events it copied, and records the whole of it', async () => {
    // The third append fails, as a crash there would end the run: two streams' runs are copied.
    const append = target.append.bind(target);
    let appends = 0;
    const cut = jest.spyOn(target, 'append').mockImplementation((...args) => {
      if (++appends === 3) return Promise.reject(new Error('killed'));
      return append(...args);
    });
    await expect(copy()).rejects.toThrow('killed');
    cut.mockRestore();
    expect(await all(target)).toHaveLength(2);

    const done = await copy();

    expect(done).toMatchObject({ copied: 5, resumed: 2, changed: 4, erased: 0 });
    const copied = await all(target);
    expect(copied.map((event) => event.id)).toEqual([
      ...(await all(source)).map((event) => event.id),
      copied[7].id,
    ]);
    expect(copied[7].type).toBe(RECORD);
    expect((await verifyChain(target.readChain(), 'stream')).broken).toBeNull();
  });

  it('runs beforeRecord once the copy is whole, before the record: a failure there leaves it unrecorded', async () => {
    const failing = jest.fn(async () => {
      expect((await all(target)).map((event) => event.type)).not.toContain(RECORD);
      throw new Error('MongoDB is down');
    });
    await expect(copyHistory(source, target, protect, RECORD, failing)).rejects.toThrow('MongoDB is down');
    expect(await all(target)).toHaveLength(7);

    const after = jest.fn(() => Promise.resolve());
    expect(await copyHistory(source, target, protect, RECORD, after)).toMatchObject({
      copied: 0,
      resumed: 7,
    });
    expect(failing).toHaveBeenCalledTimes(1);
    expect(after).toHaveBeenCalledTimes(1);
    // Complete: nothing runs again.
    expect(await copyHistory(source, target, protect, RECORD, after)).toBeNull();
    expect(after).toHaveBeenCalledTimes(1);
  });

  it('refuses a target that holds another history, and writes nothing to it', async () => {
    await target.append('other-1', [newEvent('SessionEnded.v1', { sessionId: 'x' })], 'no_stream');

    const refused = copy();

    await expect(refused).rejects.toThrow(HistoryCopyError);
    await expect(refused).rejects.toMatchObject({
      code: 'target-not-empty',
      name: 'HistoryCopyError',
      message: expect.stringContaining('(its event '),
    });
    await expect(refused).rejects.toMatchObject({
      message: expect.stringMatching(
        /not a copy of this source cut short \(its event .+ in other-1@0 is not the source's next one\): give a new, empty database$/,
      ),
    });
    expect(await all(target)).toHaveLength(1);
  });

  it('refuses the source itself as the target: it holds plaintext', async () => {
    const refused = copy(source);

    await expect(refused).rejects.toMatchObject({
      code: 'target-not-empty',
      message: expect.stringMatching(
        /personal values in plaintext \(user-.+@0\): it is no protected copy \(is it the source itself\?\)\. Give a new, empty database$/,
      ),
    });
    expect(await all(source)).toHaveLength(7);
  });

  it('refuses a finished copy of an older head of the source', async () => {
    await copy();
    await source.append('session-1', [newEvent('SessionEnded.v1', { sessionId: '3' })], 1);

    await expect(copy()).rejects.toMatchObject({
      code: 'target-not-empty',
      message:
        'The target holds a finished copy of an older head of the source: the source was written to since. ' +
        'Copy again into a new, empty database',
    });
  });

  it('does not record a copy when the source was written to meanwhile', async () => {
    let written = false;
    const writing: HistoryRewrite = {
      ...protect,
      rewrite: async (events) => {
        if (!written) {
          written = true;
          await source.append('session-1', [newEvent('SessionEnded.v1', { sessionId: 'late' })], 1);
        }
        return protect.rewrite(events);
      },
    };

    await expect(copy(target, writing)).rejects.toMatchObject({
      code: 'source-changed',
      message: expect.stringMatching(
        /^The source was written to during the copy \(its head moved past \d+\): the copy lacks those events and is not recorded as done\. Stop every writer, then copy again into a new, empty database$/,
      ),
    });

    expect((await all(target)).map((event) => event.type)).not.toContain(RECORD);
  });

  it('copies a history with nothing to protect all the same: the new history starts at its first event', async () => {
    const plain = await startEsdbDouble();
    const plainStore = EsdbEventStore.connect(plain.connectionString);
    try {
      await plainStore.append('session-9', [newEvent('SessionEnded.v1', { sessionId: '9' })], 'no_stream');
      await plainStore.append('session-8', [newEvent('SessionEnded.v1', { sessionId: '8' })], 'no_stream');
      const [first] = await all(plainStore);

      const done = await copyHistory(plainStore, target, protect, RECORD);

      expect(done).toMatchObject({
        changed: 0,
        erased: 0,
        copied: 2,
        firstChanged: formatPosition(first.position),
      });
      expect((await all(target)).map((event) => event.type)).toEqual([
        'SessionEnded.v1',
        'SessionEnded.v1',
        RECORD,
      ]);
    } finally {
      await plainStore.close();
      await plain.stop();
    }
  });

  it('refuses an empty source, and one whose chain is broken', async () => {
    const empty = await startEsdbDouble();
    const emptyStore = EsdbEventStore.connect(empty.connectionString);
    try {
      await expect(copyHistory(emptyStore, target, protect, RECORD)).rejects.toMatchObject({
        code: 'source-empty',
        message: 'The source history is empty: nothing to copy',
      });
    } finally {
      await emptyStore.close();
      await empty.stop();
    }
    doubles[0].log.append('forged-1', { kind: 'no_stream' }, [
      {
        id: '0190a1b2-0000-7000-8000-0000000000f1',
        type: 'SessionEnded.v1',
        contentType: 'application/json',
        data: Buffer.from('{"sessionId":"9"}'),
        customMetadata: Buffer.from(JSON.stringify({ ...newEvent().metadata, hash: '0'.repeat(64) })),
      },
    ]);

    await expect(copy()).rejects.toThrow(HistoryBrokenError);
    await expect(copy()).rejects.toMatchObject({
      name: 'HistoryBrokenError',
      code: 'history-broken',
      message: expect.stringMatching(
        /^The hash chain breaks at position .+\): the history is not rewritten over a break, which would make the edit look genuine \(see audit verify\)$/,
      ),
    });
    expect(await all(target)).toEqual([]);
  });
});

/** A history longer than a page (256 events): runs of one stream longer than an append (64). */
describe('copyHistory: a history of several pages', () => {
  let doubles: EsdbDouble[];
  let source: EsdbEventStore;
  let target: EsdbEventStore;
  // Nothing to protect: the paging is what is under test. Each rewrite's size is kept.
  const rewrites: number[] = [];
  const plain: HistoryRewrite = {
    rewrite: (events) => {
      rewrites.push(events.length);
      return Promise.resolve(events.map(() => null));
    },
    record: (summary) => ({ stream: 'historyprotection', event: newEvent(RECORD, { ...summary }) }),
  };
  /** Each append to the target: its stream, its number of events and its expected revision. */
  const appends = () => {
    const calls: [string, number, unknown][] = [];
    const append = target.append.bind(target);
    const spy = jest.spyOn(target, 'append').mockImplementation((stream, events, expected) => {
      calls.push([stream, events.length, expected]);
      return append(stream, events, expected);
    });
    return { calls, spy };
  };
  const sessions = (count: number) =>
    Array.from({ length: count }, (_, index) => newEvent('SessionEnded.v1', { sessionId: String(index) }));

  beforeEach(async () => {
    rewrites.length = 0;
    doubles = await Promise.all([startEsdbDouble(), startEsdbDouble()]);
    source = EsdbEventStore.connect(doubles[0].connectionString);
    target = EsdbEventStore.connect(doubles[1].connectionString);
    // 512 events, two whole pages: a (100), b (400), c (12).
    await source.append('a', sessions(100), 'no_stream');
    await source.append('b', sessions(200), 'no_stream');
    await source.append('b', sessions(200), 199);
    await source.append('c', sessions(12), 'no_stream');
  });

  afterEach(async () => {
    await Promise.all([source.close(), target.close()]);
    await Promise.all(doubles.map((double) => double.stop()));
  });

  it('rewrites a page at a time and appends each run of a stream in a page, 64 events at most', async () => {
    const { calls } = appends();

    const done = await copyHistory(source, target, plain, RECORD);

    expect(rewrites).toEqual([256, 256]);
    expect(calls).toEqual([
      // The first page: a whole, then b's first 156.
      ['a', 64, 'no_stream'],
      ['a', 36, 63],
      ['b', 64, 'no_stream'],
      ['b', 64, 63],
      ['b', 28, 127],
      // The second: the rest of b, then c.
      ['b', 64, 155],
      ['b', 64, 219],
      ['b', 64, 283],
      ['b', 52, 347],
      ['c', 12, 'no_stream'],
      ['historyprotection', 1, 'any'],
    ]);
    expect(done).toMatchObject({ copied: 512, resumed: 0, changed: 0 });
    expect((await all(target)).slice(0, 512).map((event) => event.id)).toEqual(
      (await all(source)).map((event) => event.id),
    );
  });

  it('checks the copies of a run cut short a page at a time, and copies the rest', async () => {
    const { calls, spy } = appends();
    spy.mockImplementation(async (stream, events, expected) => {
      calls.push([stream, events.length, expected]);
      // The eighth append fails, as a crash there would end the run: 384 events are copied.
      if (calls.length === 8) throw new Error('killed');
      return EsdbEventStore.prototype.append.call(target, stream, events, expected);
    });
    await expect(copyHistory(source, target, plain, RECORD)).rejects.toThrow('killed');
    spy.mockRestore();
    expect(await all(target)).toHaveLength(384);
    rewrites.length = 0;

    const done = await copyHistory(source, target, plain, RECORD);

    // The 384 copies checked in pages (256, then 128), then the 128 events left copied as one page.
    expect(rewrites).toEqual([256, 128, 128]);
    expect(done).toMatchObject({ copied: 128, resumed: 384 });
    expect((await verifyChain(target.readChain(), 'stream')).broken).toBeNull();
  });

  it('copies nothing past the head it started from when the source is written to meanwhile', async () => {
    const late = newEvent('SessionEnded.v1', { sessionId: 'late' });
    const writing: HistoryRewrite = {
      ...plain,
      rewrite: async (events) => {
        // While the first page is copied: the read is still before the end.
        if (rewrites.length === 0) await source.append('c', [late], 11);
        return plain.rewrite(events);
      },
    };

    await expect(copyHistory(source, target, writing, RECORD)).rejects.toMatchObject({
      code: 'source-changed',
    });

    const copied = await all(target);
    expect(copied).toHaveLength(512);
    expect(copied.map((event) => event.id)).not.toContain(late.id);
  });

  it("refuses a target whose first event has the id of the source's first, but not its stream or type", async () => {
    const [first] = await all(source);
    for (const [stream, type] of [
      ['elsewhere', first.type],
      [first.stream, 'Other.v1'],
    ]) {
      const other = await startEsdbDouble();
      const otherStore = EsdbEventStore.connect(other.connectionString);
      try {
        await otherStore.append(stream, [{ ...newEvent(type), id: first.id }], 'no_stream');
        await expect(copyHistory(source, otherStore, plain, RECORD)).rejects.toMatchObject({
          code: 'target-not-empty',
          message: expect.stringContaining('not a copy of this source cut short'),
        });
      } finally {
        await otherStore.close();
        await other.stop();
      }
    }
  });
});
