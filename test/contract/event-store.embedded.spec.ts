import {
  DuplicateEventIdError,
  position,
  type RecordedEvent,
  SqliteEventStore,
  type SqliteEventStoreOptions,
  type SubscriptionMessage,
  verifyChain,
  WrongExpectedRevisionError,
} from '@chronicle/event-store';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEventStoreContract, type EventStoreHarness } from './event-store.contract';
import { type AppendLoad, eventCount, runAppendLoad } from './support/append-load';
import {
  collect,
  describeMessages,
  newEvent,
  newEvents,
  nextWithin,
  pullUntil,
  waitUntil,
  within,
} from './support/events';
import { spawnAppendWorker } from './support/spawn-append-worker';

async function tempDataDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'chronicle-event-store-'));
}

async function embeddedHarness(): Promise<EventStoreHarness> {
  const dataDir = await tempDataDir();
  const opened: SqliteEventStore[] = [];
  const open = (): SqliteEventStore => {
    const store = SqliteEventStore.open(dataDir);
    opened.push(store);
    return store;
  };
  return {
    store: open(),
    openAnother: () => Promise.resolve(open()),
    cleanup: async () => {
      await Promise.all(opened.map((store) => store.close()));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

describeEventStoreContract('embedded (SQLite)', embeddedHarness);

describe('SqliteEventStore', () => {
  let dataDir: string;
  const stores: SqliteEventStore[] = [];

  function open(options?: SqliteEventStoreOptions): SqliteEventStore {
    const store = SqliteEventStore.open(dataDir, options);
    stores.push(store);
    return store;
  }

  beforeEach(async () => {
    dataDir = await tempDataDir();
  });

  /** events.db as schema version 1 left it (no chain, no recorded time): user-1's events, in order. */
  function writeVersionOneStore(events: Array<{ occurredAt: string; data: string }>): void {
    const db = new Database(join(dataDir, 'events.db'));
    try {
      db.exec(`
        CREATE TABLE events (position INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, stream TEXT NOT NULL,
          revision INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL,
          UNIQUE (stream, revision)) STRICT;
        PRAGMA user_version = 1;`);
      const insert = db.prepare(
        'INSERT INTO events (id, stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)',
      );
      db.transaction(() =>
        events.forEach(({ occurredAt, data }, revision) =>
          insert.run(
            randomUUID(),
            'user-1',
            revision,
            'UserPatched.v1',
            data,
            JSON.stringify({ actor: 'a-1', correlationId: 'c', causationId: null, occurredAt }),
          ),
        ),
      )();
    } finally {
      db.close();
    }
  }

  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps its files private to the owner: events.db and its -wal and -shm are 0600', async () => {
    const store = open();
    await store.append(`private-${randomUUID()}`, [newEvent()], 'no_stream');
    const files = ['events.db', 'events.db-wal', 'events.db-shm'];
    expect(files.map((file) => statSync(join(dataDir, file)).mode & 0o777)).toEqual([0o600, 0o600, 0o600]);
  });

  describe('history', () => {
    it('refuses UPDATE and DELETE of events, even through its own connection', async () => {
      const store = open();
      await store.append(`sealed-${randomUUID()}`, newEvents(2), 'no_stream');
      const db = new Database(join(dataDir, 'events.db'));
      try {
        expect(() => db.prepare("UPDATE events SET data = '{}' WHERE position = 1").run()).toThrow(
          'append-only',
        );
        expect(() => db.prepare('DELETE FROM events WHERE position = 2').run()).toThrow('append-only');
      } finally {
        db.close();
      }
      expect((await collect(store.readAll())).map((e) => e.position.commit)).toEqual([1n, 2n]);
    });

    it('brings a version 1 store to version 2: recorded times from occurredAt made monotonic, a valid chain', async () => {
      const occurredAt = [
        '2026-11-02T10:00:00.000Z',
        '2026-03-01T00:00:00Z',
        'not a time',
        '2026-11-03T00:00:00.000Z',
      ];
      writeVersionOneStore(occurredAt.map((time, i) => ({ occurredAt: time, data: `{"age":${20 + i}}` })));

      const store = open();
      const events = await collect(store.readAll());

      expect(events.map((e) => e.recordedAt)).toEqual([
        '2026-11-02T10:00:00.000Z',
        '2026-11-02T10:00:00.000Z',
        '2026-11-02T10:00:00.000Z',
        '2026-11-03T00:00:00.000Z',
      ]);
      await expect(verifyChain(store.readChain(), 'log')).resolves.toMatchObject({ broken: null, events: 4 });
      // The chain goes on from the migrated head, with the store's own time from now on.
      await store.append('user-1', [newEvent()], 3);
      const after = await verifyChain(store.readChain(), 'log');
      expect(after).toMatchObject({ broken: null, events: 5 });
      expect(Date.parse(after.head!.recordedAt)).toBeGreaterThan(Date.now() - 60_000);
      const check = new Database(join(dataDir, 'events.db'), { readonly: true });
      try {
        expect(check.pragma('user_version', { simple: true })).toBe(2);
        expect(() => check.prepare('SELECT actor, correlation_id FROM events').all()).not.toThrow();
      } finally {
        check.close();
      }
    });

    it('refuses a store of a newer schema version', () => {
      const db = new Database(join(dataDir, 'events.db'));
      db.pragma('user_version = 3');
      db.close();

      expect(() => open()).toThrow('schema version 3; this build knows 2');
      // Refused before anything is changed: a newer build's file keeps its journal mode.
      const check = new Database(join(dataDir, 'events.db'), { readonly: true });
      try {
        expect(check.pragma('journal_mode', { simple: true })).toBe('delete');
      } finally {
        check.close();
      }
    });

    it('chains a version 1 store of more events than one migration batch, every one of them', async () => {
      // The migration reads 5,000 events at a time.
      writeVersionOneStore(
        Array.from({ length: 5_001 }, () => ({ occurredAt: '2026-11-02T10:00:00.000Z', data: '{}' })),
      );

      const store = open();
      await expect(verifyChain(store.readChain(), 'log')).resolves.toMatchObject({
        broken: null,
        events: 5_001,
      });
    });
  });

  describe('group commit', () => {
    it('commits appends requested together in one transaction', async () => {
      const store = open();
      const before = store.stats();

      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) => store.append(`group-${i}`, [newEvent()], 'no_stream')),
      );

      expect(store.stats()).toEqual({
        commits: before.commits + 1,
        appends: before.appends + 200,
        events: before.events + 200,
      });
      expect(results.map((r) => r.position.commit)).toEqual(
        Array.from({ length: 200 }, (_, i) => BigInt(i + 1)),
      );
    });

    it('fails only the conflicting append of a group and leaves no gap in positions', async () => {
      const store = open();
      const [first, conflicting, last] = [newEvent(), newEvent(), newEvent()];

      const outcomes = await Promise.allSettled([
        store.append('a-1', [first], 'no_stream'),
        store.append('b-1', [conflicting, newEvent()], 4),
        store.append('a-1', [last], 0),
      ]);

      expect(outcomes[0]).toMatchObject({ status: 'fulfilled', value: { position: position(1) } });
      expect(outcomes[1]).toMatchObject({ status: 'rejected', reason: { expected: 4, actual: 'no_stream' } });
      expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedRevisionError);
      expect(outcomes[2]).toMatchObject({ status: 'fulfilled', value: { position: position(2) } });
      expect(store.stats()).toMatchObject({ commits: 1, appends: 2, events: 2 });
      const all = await collect(store.readAll());
      expect(all.map((e) => [e.id, e.position.commit])).toEqual([
        [first.id, 1n],
        [last.id, 2n],
      ]);
    });

    it('commits appends requested before close, then refuses new ones', async () => {
      const store = open();
      const event = newEvent();

      const pending = store.append('closing-1', [event], 'no_stream');
      await store.close();

      await expect(pending).resolves.toMatchObject({ nextExpectedRevision: 0 });
      await expect(store.append('closing-1', [newEvent()], 0)).rejects.toThrow('closed');
      await expect(store.readStream('closing-1')).rejects.toThrow('closed');
      const reopened = open();
      await expect(reopened.readStream('closing-1')).resolves.toMatchObject([{ id: event.id }]);
    });
  });

  describe('durability', () => {
    it('keeps every event across close and reopen, and continues from there', async () => {
      const store = open();
      await store.append('user-1', newEvents(2), 'no_stream');
      await store.append('customer-1', [newEvent()], 'no_stream');
      const before = await collect(store.readAll());
      await store.close();

      const reopened = open();

      expect(await collect(reopened.readAll())).toEqual(before);
      expect(await reopened.headPosition()).toEqual(position(3));
      await expect(reopened.append('user-1', [newEvent()], 1)).resolves.toEqual({
        nextExpectedRevision: 2,
        position: position(4),
      });
    });
  });

  describe('idempotency and ids', () => {
    it('accepts a retry with any or stream_exists without writing twice', async () => {
      const store = open();
      const events = newEvents(2);
      await store.append('retry-1', [newEvent()], 'no_stream');
      const first = await store.append('retry-1', events, 'any');

      await expect(store.append('retry-1', events, 'any')).resolves.toEqual(first);
      await expect(store.append('retry-1', events, 'stream_exists')).resolves.toEqual(first);
      expect(await store.readStream('retry-1')).toHaveLength(3);
      expect(store.stats().events).toBe(3);
    });

    it('refuses a "retry" whose expected revision does not lead to where its events are', async () => {
      const store = open();
      const events = newEvents(2);
      await store.append('retry-2', [newEvent()], 'no_stream');
      await store.append('retry-2', events, 0);

      // Separately and in one group commit: the retry path must check the revision either way.
      await expect(store.append('retry-2', events, 1)).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      await expect(store.append('retry-2', events, 'no_stream')).rejects.toBeInstanceOf(
        WrongExpectedRevisionError,
      );
      const group = await Promise.allSettled([
        store.append('retry-2', events, 0),
        store.append('retry-2', events, 2),
        store.append('retry-2', events, 'no_stream'),
      ]);
      expect(group.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
      expect(store.stats().commits).toBe(5);
      expect(await store.readStream('retry-2')).toHaveLength(3);
    });

    it('rejects an id stored elsewhere and writes nothing of that append', async () => {
      const store = open();
      const reused = newEvent();
      await store.append('ids-1', [reused], 'no_stream');

      const attempt = store.append('ids-2', [newEvent(), reused], 'no_stream');

      await expect(attempt).rejects.toBeInstanceOf(DuplicateEventIdError);
      await expect(attempt).rejects.toMatchObject({ stream: 'ids-2', eventId: reused.id });
      await expect(store.readStream('ids-2')).resolves.toEqual([]);
    });

    it('rejects invalid appends before queueing them', async () => {
      const store = open();

      await expect(store.append('empty-1', [], 'any')).rejects.toThrow(RangeError);
      await expect(store.append('$system', [newEvent()], 'any')).rejects.toThrow(RangeError);
      await expect(store.append('neg-1', [newEvent()], -1)).rejects.toThrow(RangeError);
      await expect(store.readStream('neg-1', { fromRevision: -1 })).rejects.toThrow(RangeError);
      expect(store.stats().commits).toBe(0);
    });
  });

  describe('batched reads', () => {
    it('reads all events across batch boundaries, with and without a limit', async () => {
      const store = open({ readBatchSize: 3 });
      for (let i = 0; i < 5; i++) await store.append(`batch-${i}`, newEvents(2), 'no_stream');

      const all = await collect(store.readAll());
      const limited = await collect(store.readAll({ after: position(2), limit: 6 }));

      expect(all.map((e) => e.position.commit)).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i + 1)));
      expect(limited.map((e) => e.position.commit)).toEqual([3n, 4n, 5n, 6n, 7n, 8n]);
    });

    it('feeds a subscription from the start across batches, then live', async () => {
      const store = open({ readBatchSize: 3 });
      await store.append('sub-1', newEvents(7), 'no_stream');
      const subscription = store.subscribeToAll();
      const iterator = subscription[Symbol.asyncIterator]();

      try {
        const history = await pullUntil(iterator, new Set(['sub-1']), (m) => m.kind === 'caught-up');
        const live = newEvent();
        await store.append('sub-1', [live], 6);
        const next = await nextWithin(iterator, 1000);

        expect(history.map(revisionOf)).toEqual([0, 1, 2, 3, 4, 5, 6, 'caught-up']);
        expect(next).toMatchObject({
          done: false,
          value: { kind: 'event', event: { id: live.id, revision: 7 } },
        });
      } finally {
        await subscription.close();
      }
    });

    it('feeds a filtered subscription window by window and batch by batch, never skipping a row', async () => {
      const store = open({ readBatchSize: 2, filterWindow: 5 });
      const typed = (type: string) => newEvent(undefined, type);
      const events = [typed('Wanted.v1'), ...Array.from({ length: 23 }, () => typed('Other.v1'))];
      events.push(
        typed('Wanted.v1'),
        typed('Wanted.v1'),
        typed('Wanted.v1'),
        typed('Other.v1'),
        typed('Wanted.v1'),
      );
      await store.append('filtered-1', events, 'no_stream');
      const subscription = store.subscribeToAll({ eventTypes: ['Wanted.v1'] });
      const iterator = subscription[Symbol.asyncIterator]();

      try {
        const history = await pullUntil(iterator, new Set(['filtered-1']), (m) => m.kind === 'caught-up');
        expect(history.map(revisionOf)).toEqual([0, 24, 25, 26, 28, 'caught-up']);
        const live = [typed('Other.v1'), typed('Wanted.v1')];
        const arriving = pullUntil(iterator, new Set(['filtered-1']), () => true, 1000);
        await store.append('filtered-1', live, 28);
        expect((await arriving).map(revisionOf)).toEqual([30]);
      } finally {
        await subscription.close();
      }
    });

    it('fills an audit page across filter windows: no page short of its limit before the head', async () => {
      const store = open({ filterWindow: 3 });
      const typed = (type: string) => newEvent(undefined, type);
      const wanted = [typed('Wanted.v1'), typed('Wanted.v1'), typed('Wanted.v1')];
      const events = [wanted[0], ...Array.from({ length: 20 }, () => typed('Other.v1')), wanted[1]];
      events.push(...Array.from({ length: 10 }, () => typed('Other.v1')), wanted[2]);
      await store.append('windows-1', events, 'no_stream');

      const first = await store.queryLog({ limit: 2, eventTypes: ['Wanted.v1'] });
      const second = await store.queryLog({ limit: 2, eventTypes: ['Wanted.v1'], after: first.next! });

      expect(first.events.map((e) => e.id)).toEqual([wanted[0].id, wanted[1].id]);
      expect(first.next).toEqual(position(22));
      expect(second).toEqual({ events: [expect.objectContaining({ id: wanted[2].id })], next: null });
    });

    it('wakes live subscriptions on its own appends without waiting for the poll', async () => {
      const store = open({ pollIntervalMs: 60_000 });
      const subscription = store.subscribeToAll();
      const iterator = subscription[Symbol.asyncIterator]();
      await expect(nextWithin(iterator, 1000)).resolves.toMatchObject({ value: { kind: 'caught-up' } });

      try {
        const arriving = nextWithin(iterator, 500);
        const event = newEvent();
        await store.append('wake-1', [event], 'no_stream');

        await expect(arriving).resolves.toMatchObject({ value: { kind: 'event', event: { id: event.id } } });
      } finally {
        await subscription.close();
      }
    });

    it('ends subscriptions when the store closes', async () => {
      const store = open();
      const subscription = store.subscribeToAll();
      const iterator = subscription[Symbol.asyncIterator]();
      await expect(nextWithin(iterator, 1000)).resolves.toMatchObject({ value: { kind: 'caught-up' } });

      const waiting = iterator.next();
      await store.close();

      await expect(within(waiting, 1000, 'end of the subscription')).resolves.toMatchObject({ done: true });
      expect(() => store.subscribeToAll()).toThrow('closed');
    });
  });

  describe('two processes on one data directory', () => {
    it('interleaves concurrent appends from both without loss, duplicates or gaps', async () => {
      const store = open();
      const seen: RecordedEvent[] = [];
      const subscription = store.subscribeToAll();
      const consuming = (async () => {
        for await (const message of subscription) if (message.kind === 'event') seen.push(message.event);
      })();
      const sharedStreams = [`shared-${randomUUID()}`, `shared-${randomUUID()}`];
      const load = (prefix: string, delayMs: number): AppendLoad => ({
        sharedStreams,
        ownStreamPrefix: `${prefix}-${randomUUID()}`,
        workers: 6,
        appendsPerWorker: 40,
        delayMs,
      });
      // The child is paced to run for about half a second; the parent starts on its first event,
      // so the two overlap however slowly the child process starts.
      const child = spawnAppendWorker(dataDir, load('child', 10));
      await child.ready;

      child.go();
      await waitUntil(() => seen.length > 0, 10_000, "the child's first event");
      const [parentIds, childIds] = await Promise.all([
        runAppendLoad(store, load('parent', 2)),
        child.result,
      ]);

      const all = await collect(store.readAll());
      const written = [...parentIds, ...childIds];
      expect(all.map((e) => e.position.commit)).toEqual(all.map((_, i) => BigInt(i + 1)));
      expect(new Set(all.map((e) => e.id))).toEqual(new Set(written));
      expect(all).toHaveLength(written.length);
      const revisions = new Map<string, number[]>();
      for (const event of all)
        revisions.set(event.stream, [...(revisions.get(event.stream) ?? []), event.revision]);
      for (const [stream, list] of revisions) {
        expect([stream, list]).toEqual([stream, list.map((_, i) => i)]);
      }
      const fromChild = new Set(childIds);
      // The two processes really wrote at the same time, and both to the contended streams.
      const childPositions = all.filter((e) => fromChild.has(e.id)).map((e) => e.position.commit);
      const parentPositions = all.filter((e) => !fromChild.has(e.id)).map((e) => e.position.commit);
      expect(childPositions[0]).toBeLessThan(parentPositions[parentPositions.length - 1]);
      expect(parentPositions[0]).toBeLessThan(childPositions[childPositions.length - 1]);
      const sharedWriters = new Set(
        all
          .filter((e) => sharedStreams.includes(e.stream))
          .map((e) => (fromChild.has(e.id) ? 'child' : 'parent')),
      );
      expect(sharedWriters).toEqual(new Set(['child', 'parent']));

      await waitUntil(() => seen.length >= all.length, 3000, 'every event on the subscription');
      await subscription.close();
      await consuming;
      expect(seen).toEqual(all);
      // Each commit chained to the other process's last event, not to its own last one.
      await expect(verifyChain(store.readChain(), 'log')).resolves.toMatchObject({
        broken: null,
        events: all.length,
      });
    }, 30_000);

    it("delivers the other process's appends to a live subscription on its next poll", async () => {
      // Only the poller's interval is fake: the test moves it on, rather than timing the delivery.
      jest.useFakeTimers({ doNotFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'nextTick', 'Date'] });
      try {
        const store = open({ pollIntervalMs: 100 });
        const subscription = store.subscribeToAll();
        const iterator = subscription[Symbol.asyncIterator]();
        await expect(nextWithin(iterator, 5000)).resolves.toMatchObject({ value: { kind: 'caught-up' } });
        const load: AppendLoad = {
          sharedStreams: [],
          ownStreamPrefix: `other-${randomUUID()}`,
          workers: 1,
          appendsPerWorker: 5,
          delayMs: 0,
        };
        const child = spawnAppendWorker(dataDir, load);
        await child.ready;
        // Asked before the appends, the subscription waits: only a poll can tell it of them.
        const first = iterator.next();
        child.go();
        const ids = await child.result;

        jest.advanceTimersByTime(100);
        const received: SubscriptionMessage[] = [];
        try {
          received.push((await within(first, 10_000, 'the first event')).value as SubscriptionMessage);
          while (received.length < eventCount(load)) {
            received.push((await nextWithin(iterator, 10_000)).value as SubscriptionMessage);
          }
        } finally {
          await subscription.close();
        }

        expect(describeMessages(received)).toEqual(ids.map((id) => `ev:${id}`));
      } finally {
        jest.useRealTimers();
      }
    }, 30_000);
  });
});

function revisionOf(message: SubscriptionMessage): number | 'caught-up' {
  return message.kind === 'event' ? message.event.revision : 'caught-up';
}
