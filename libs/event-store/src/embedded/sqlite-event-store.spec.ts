import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type EventStoreObserver,
  type SubscriptionMessage,
  WrongExpectedRevisionError,
} from '../event-store.port';
import { newEvent } from '../new-event.spec-helper';
import { position } from '../position';
import { EVENTS_FILE } from './events-schema';
import { DuplicateEventIdError } from './sqlite-appender';
import { SqliteEventStore, type SqliteEventStoreOptions } from './sqlite-event-store';

const kinds = (messages: SubscriptionMessage[]) =>
  messages.map((m) =>
    m.kind === 'event'
      ? `event ${m.event.position.commit}`
      : m.kind === 'checkpoint'
        ? `checkpoint ${m.position.commit}`
        : m.kind,
  );

/** Messages until (and with) the first caught-up. */
async function untilCaughtUp(iterator: AsyncIterator<SubscriptionMessage>): Promise<SubscriptionMessage[]> {
  const messages: SubscriptionMessage[] = [];
  for (;;) {
    const { done, value } = await iterator.next();
    if (done) throw new Error('the subscription ended before it caught up');
    messages.push(value);
    if (value.kind === 'caught-up') return messages;
  }
}

describe('SqliteEventStore', () => {
  let dataDir: string;
  const stores: SqliteEventStore[] = [];

  function open(options?: SqliteEventStoreOptions): SqliteEventStore {
    const store = SqliteEventStore.open(dataDir, options);
    stores.push(store);
    return store;
  }

  /** A second connection to events.db, as a tool or another process would have. */
  function raw(): Database.Database {
    return new Database(join(dataDir, EVENTS_FILE));
  }

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'sqlite-event-store-'));
  });

  afterEach(async () => {
    jest.useRealTimers();
    await Promise.all(stores.splice(0).map((store) => store.close()));
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe('errors', () => {
    it('names a conflict with the stream, the expected and the actual revision', async () => {
      const store = open();
      await store.append('conflict-1', [newEvent()], 'no_stream');

      const attempt = store.append('conflict-1', [newEvent()], 'no_stream');

      await expect(attempt).rejects.toThrow(WrongExpectedRevisionError);
      await expect(attempt).rejects.toMatchObject({
        name: 'WrongExpectedRevisionError',
        message: 'Stream conflict-1: expected revision no_stream, actual 0',
        stream: 'conflict-1',
        expected: 'no_stream',
        actual: 0,
      });
    });

    it('refuses a lone event whose id is stored in another stream, as a duplicate, not a retry', async () => {
      const store = open();
      const reused = newEvent();
      await store.append('first-1', [reused], 'no_stream');

      // Where a retry would have put it (revision 0 of a new stream), but in another stream.
      const attempt = store.append('second-1', [reused], 'no_stream');

      await expect(attempt).rejects.toThrow(DuplicateEventIdError);
      await expect(attempt).rejects.toMatchObject({
        name: 'DuplicateEventIdError',
        message: `Stream second-1: event id ${reused.id} is already stored`,
      });
      await expect(store.readStream('second-1')).resolves.toEqual([]);
    });

    it('takes an append as a retry only when every id is where it would have put it', async () => {
      const store = open();
      const [a, b] = [newEvent(), newEvent()];
      await store.append('retry-1', [a, b], 'no_stream');

      await expect(store.append('retry-1', [a, newEvent()], 'no_stream')).rejects.toMatchObject({
        name: 'WrongExpectedRevisionError',
        message: 'Stream retry-1: expected revision no_stream, actual 1',
      });
      await expect(store.append('retry-1', [a, b], 'no_stream')).resolves.toEqual({
        nextExpectedRevision: 1,
        position: position(2),
      });
    });
  });

  describe('a write that fails in SQLite', () => {
    it('passes on an error other than a duplicate id, and fails only its own append', async () => {
      const store = open();
      const db = raw();
      db.exec(
        "CREATE TRIGGER refuse_poison BEFORE INSERT ON events WHEN NEW.type = 'Poison.v1' BEGIN SELECT RAISE(ABORT, 'poison refused, whatever its events.id'); END",
      );
      db.close();

      const [poisoned, healthy] = await Promise.allSettled([
        store.append('poison-1', [newEvent('Poison.v1')], 'no_stream'),
        store.append('healthy-1', [newEvent()], 'no_stream'),
      ]);

      expect(poisoned.status).toBe('rejected');
      const error = (poisoned as PromiseRejectedResult).reason as Error & { code?: string };
      expect(error).not.toBeInstanceOf(DuplicateEventIdError);
      expect(error.message).toBe('poison refused, whatever its events.id');
      expect(error.code).toBe('SQLITE_CONSTRAINT_TRIGGER');
      expect(healthy.status).toBe('fulfilled');
      expect(store.stats().commits).toBe(1);
      await expect(store.readStream('poison-1')).resolves.toEqual([]);
      await expect(store.readStream('healthy-1')).resolves.toHaveLength(1);
    });

    it('passes on a unique violation that is not of the event id', async () => {
      const store = open();
      const db = raw();
      db.exec(
        'CREATE TABLE seen_types (type TEXT NOT NULL UNIQUE);' +
          'CREATE TRIGGER one_per_type AFTER INSERT ON events BEGIN INSERT INTO seen_types VALUES (NEW.type); END',
      );
      db.close();
      await store.append('unique-1', [newEvent('Once.v1')], 'no_stream');

      const attempt = store.append('unique-2', [newEvent('Once.v1')], 'no_stream');

      await expect(attempt).rejects.toMatchObject({
        code: 'SQLITE_CONSTRAINT_UNIQUE',
        message: 'UNIQUE constraint failed: seen_types.type',
      });
      await expect(attempt).rejects.not.toBeInstanceOf(DuplicateEventIdError);
    });

    it('fails the whole group when SQLite rolls the transaction back, and writes none of it', async () => {
      const store = open();
      const db = raw();
      db.exec(
        "CREATE TRIGGER roll_back BEFORE INSERT ON events WHEN NEW.type = 'Fatal.v1' BEGIN SELECT RAISE(ROLLBACK, 'rolled back'); END",
      );
      db.close();

      const group = await Promise.allSettled([
        store.append('before-1', [newEvent()], 'no_stream'),
        store.append('fatal-1', [newEvent('Fatal.v1')], 'no_stream'),
        store.append('after-1', [newEvent()], 'no_stream'),
      ]);

      expect(group.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
      for (const outcome of group) {
        expect((outcome as PromiseRejectedResult).reason).toMatchObject({ message: 'rolled back' });
      }
      for (const stream of ['before-1', 'fatal-1', 'after-1']) {
        await expect(store.readStream(stream)).resolves.toEqual([]);
      }
      expect(store.stats().commits).toBe(0);
      // The store goes on: the next group commits from where the log was.
      await expect(store.append('after-1', [newEvent()], 'no_stream')).resolves.toEqual({
        nextExpectedRevision: 0,
        position: position(1),
      });
    });
  });

  describe('recorded time', () => {
    it('never goes back when the clock does, so that it never decreases with position', async () => {
      const store = open();
      const recordedAt = async (stream: string) => (await store.readStream(stream))[0].recordedAt;
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'queueMicrotask'] });
      try {
        jest.setSystemTime(new Date('2026-11-24T10:00:00.000Z'));
        await store.append('clock-1', [newEvent()], 'no_stream');
        jest.setSystemTime(new Date('2026-11-24T09:00:00.000Z'));
        await store.append('clock-2', [newEvent()], 'no_stream');
        jest.setSystemTime(new Date('2026-11-24T10:00:00.001Z'));
        await store.append('clock-3', [newEvent()], 'no_stream');
      } finally {
        jest.useRealTimers();
      }
      expect(await recordedAt('clock-1')).toBe('2026-11-24T10:00:00.000Z');
      expect(await recordedAt('clock-2')).toBe('2026-11-24T10:00:00.000Z');
      expect(await recordedAt('clock-3')).toBe('2026-11-24T10:00:00.001Z');
    });
  });

  describe('queryLog', () => {
    it('answers an empty page, with no next, for no wanted type and for a since after the last event', async () => {
      const store = open();
      await store.append('query-1', [newEvent(), newEvent()], 'no_stream');
      const [last] = (await store.readStream('query-1', { fromRevision: 1 })).map(
        (event) => event.recordedAt,
      );
      const later = new Date(Date.parse(last) + 1).toISOString();

      await expect(store.queryLog({ limit: 5, eventTypes: [] })).resolves.toEqual({ events: [], next: null });
      await expect(store.queryLog({ limit: 5, since: later })).resolves.toEqual({ events: [], next: null });
      await expect(store.queryLog({ limit: 5, since: last })).resolves.toMatchObject({ next: null });
    });

    it('gives a next position only when more matches lie beyond a full page, across filter windows', async () => {
      const store = open({ filterWindow: 2 });
      const events = [newEvent(), newEvent('Other.v1'), newEvent('Other.v1'), newEvent(), newEvent()];
      await store.append('query-2', events, 'no_stream');

      const positions = (events: { position: { commit: bigint } }[]) =>
        events.map((e) => Number(e.position.commit));
      const full = await store.queryLog({ limit: 3, eventTypes: ['Tested.v1'] });
      expect([positions(full.events), full.next]).toEqual([[1, 4, 5], null]);
      const first = await store.queryLog({ limit: 2, eventTypes: ['Tested.v1'] });
      expect([positions(first.events), first.next]).toEqual([[1, 4], position(4)]);
      const rest = await store.queryLog({ limit: 2, eventTypes: ['Tested.v1'], after: first.next! });
      expect([positions(rest.events), rest.next]).toEqual([[5], null]);
      const byActor = await store.queryLog({ limit: 4, actor: 'system' });
      expect([positions(byActor.events), byActor.next]).toEqual([[1, 2, 3, 4], position(4)]);
    });
  });

  describe('head, ping and chain', () => {
    it('has no head before the first event', async () => {
      const store = open();
      await expect(store.headPosition()).resolves.toBeNull();
      await store.append('head-1', [newEvent(), newEvent()], 'no_stream');
      await expect(store.headPosition()).resolves.toEqual(position(2));
    });

    it('answers ping with why the file cannot be written, until it can again', async () => {
      const store = open();
      const db = raw();
      db.exec(
        "CREATE TRIGGER probe_full BEFORE INSERT ON write_probe BEGIN SELECT RAISE(ABORT, 'disk full'); END;" +
          "CREATE TRIGGER probe_full_again BEFORE UPDATE ON write_probe BEGIN SELECT RAISE(ABORT, 'disk full'); END",
      );

      await expect(store.ping()).rejects.toMatchObject({
        message: 'events.db cannot be written: SQLITE_CONSTRAINT_TRIGGER: disk full',
        cause: { code: 'SQLITE_CONSTRAINT_TRIGGER', message: 'disk full' },
      });

      db.exec('DROP TRIGGER probe_full; DROP TRIGGER probe_full_again');
      db.close();
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('reads the whole chain in order across batches', async () => {
      const store = open({ readBatchSize: 2 });
      await store.append(
        'chain-1',
        [newEvent(), newEvent(), newEvent(), newEvent(), newEvent()],
        'no_stream',
      );
      const links: string[] = [];
      for await (const link of store.readChain()) links.push(link.position);
      expect(links).toEqual(['1', '2', '3', '4', '5']);
    });

    it('links events asked for together as it links each alone, dense or far apart, a deleted row included', async () => {
      const store = open();
      for (let i = 0; i < 12; i++) await store.append(`link-${i}`, [newEvent()], 'no_stream');
      const db = raw();
      db.exec('DROP TRIGGER IF EXISTS events_no_delete; DELETE FROM events WHERE position IN (4, 7)');
      db.close();
      const ref = (at: number) => ({ position: position(at), stream: `link-${at - 1}`, revision: 0 });
      const alone = async (ats: number[]) =>
        (await Promise.all(ats.map((at) => store.readChainLinks([ref(at)])))).map(([linked]) => linked);
      const positions = (linked: Awaited<ReturnType<typeof store.readChainLinks>>) =>
        linked.map(({ link, previous }) => [link?.position ?? null, previous?.position ?? null]);

      const dense = [3, 4, 5, 6, 8, 9];
      const sparse = [1, 5, 12];
      expect(positions(await store.readChainLinks(dense.map(ref)))).toEqual(positions(await alone(dense)));
      expect(positions(await store.readChainLinks(sparse.map(ref)))).toEqual(positions(await alone(sparse)));
      expect(positions(await store.readChainLinks(dense.map(ref)))).toEqual([
        ['3', '2'],
        [null, null],
        ['5', '3'],
        ['6', '5'],
        ['8', '6'],
        ['9', '8'],
      ]);
      expect(positions(await store.readChainLinks([ref(5), ref(8)]))).toEqual([
        ['5', '3'],
        ['8', '6'],
      ]);
      expect(await store.readChainLinks([])).toEqual([]);
    });
  });

  describe('group commit', () => {
    it('counts only commits that wrote something: closing with nothing pending commits nothing', async () => {
      const committed: number[] = [];
      const observer: EventStoreObserver = { appended: () => undefined, committed: (n) => committed.push(n) };
      const store = open({ observer });
      await store.append('count-1', [newEvent(), newEvent()], 'no_stream');

      await store.close();

      expect(committed).toEqual([2]);
      expect(store.stats()).toEqual({ commits: 1, appends: 1, events: 2 });
    });
  });

  describe('subscriptions', () => {
    it('reports a filtered subscription that matches no type as scanned to the head, then caught up', async () => {
      const store = open();
      await store.append('none-1', [newEvent(), newEvent(), newEvent()], 'no_stream');

      const subscription = store.subscribeToAll({ eventTypes: [] });

      expect(kinds(await untilCaughtUp(subscription[Symbol.asyncIterator]()))).toEqual([
        'checkpoint 3',
        'caught-up',
      ]);
      await subscription.close();
    });

    it('delivers to a filtered subscription from beyond the head only what comes after its checkpoint', async () => {
      const store = open();
      await store.append('ahead-1', [newEvent(), newEvent()], 'no_stream');
      const subscription = store.subscribeToAll({ after: position(4), eventTypes: ['Tested.v1'] });
      const iterator = subscription[Symbol.asyncIterator]();
      expect(kinds(await untilCaughtUp(iterator))).toEqual(['caught-up']);

      await store.append('ahead-1', [newEvent(), newEvent(), newEvent()], 1);

      expect(kinds([(await iterator.next()).value as SubscriptionMessage])).toEqual(['event 5']);
      await subscription.close();
    });

    it('lets the event loop run between batches of a backlog', async () => {
      const store = open({ readBatchSize: 2 });
      await store.append(
        'backlog-1',
        Array.from({ length: 6 }, () => newEvent()),
        'no_stream',
      );
      const subscription = store.subscribeToAll();
      const iterator = subscription[Symbol.asyncIterator]();
      let served = 0;
      let servedWhenTheLoopRan: number | null = null;
      setImmediate(() => (servedWhenTheLoopRan = served));

      for (
        let message = await iterator.next();
        message.value?.kind === 'event';
        message = await iterator.next()
      ) {
        served++;
      }

      expect(served).toBe(6);
      expect(servedWhenTheLoopRan).toBe(2);
      await subscription.close();
    });

    it('ends a subscription whose store closes while it yields between batches', async () => {
      const store = open({ readBatchSize: 2 });
      await store.append(
        'closing-1',
        Array.from({ length: 4 }, () => newEvent()),
        'no_stream',
      );
      const iterator = store.subscribeToAll()[Symbol.asyncIterator]();
      await iterator.next();
      await iterator.next();

      const third = iterator.next(); // The batch is served: it yields before reading the next one.
      await store.close();

      await expect(third).resolves.toEqual({ done: true, value: undefined });
    });

    it('polls for other processes while a subscription is open, and stops when the last one closes', async () => {
      jest.useFakeTimers({
        doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'queueMicrotask', 'Date'],
      });
      const store = open({ pollIntervalMs: 50 });
      const other = open();
      const first = store.subscribeToAll();
      const second = store.subscribeToAll();
      expect(jest.getTimerCount()).toBe(1);
      const iterator = second[Symbol.asyncIterator]();
      expect(kinds(await untilCaughtUp(iterator))).toEqual(['caught-up']);

      await first.close();
      expect(jest.getTimerCount()).toBe(1);
      const next = iterator.next(); // Waiting: only the poll can see another process's append.
      await other.append('other-1', [newEvent()], 'no_stream');
      jest.advanceTimersByTime(50);

      expect(kinds([(await next).value as SubscriptionMessage])).toEqual(['event 1']);
      await second.close();
      expect(jest.getTimerCount()).toBe(0);
      const third = store.subscribeToAll();
      expect(jest.getTimerCount()).toBe(1);
      await third.close();
      expect(jest.getTimerCount()).toBe(0);
    });
  });
});
