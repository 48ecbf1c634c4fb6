import {
  formatPosition,
  InvalidPositionError,
  type NewEvent,
  type Position,
  position,
  POSITION_LIMIT,
  type SubscriptionMessage,
  verifyChain,
} from '@chronicle/event-store';
import { EsdbEventStore, type EsdbEventStoreOptions } from '@chronicle/event-store/esdb';
import { UnavailableError } from '@eventstore/db-client';
import { randomUUID } from 'node:crypto';
import {
  type AppendFault,
  type EsdbDouble,
  type EsdbQuirk,
  startEsdbDouble,
} from '../doubles/esdb/esdb-double';
import { newEvent, nextWithin, pull, within } from './support/events';

// What real EventStoreDB servers do that a client must not take at its word (issue 18), played
// by the gRPC double. Each test here lost events or failed with a 5xx before the adapter's fixes.

const WANTED = 'Wanted.v1';
const OTHER = 'Other.v1';
const FAST: EsdbEventStoreOptions = {
  resubscribeInitialDelayMs: 20,
  resubscribeMaxDelayMs: 200,
  retryDelayMs: 5,
};

describe('EsdbEventStore against real servers’ behaviour (gRPC double)', () => {
  let double: EsdbDouble;
  let store: EsdbEventStore;
  let ignored: Array<{ position: Position; reason: string }>;

  async function start(quirks: EsdbQuirk[] = [], options: { batchAppend?: boolean } = {}) {
    double = await startEsdbDouble({ quirks, ...options });
    ignored = [];
    store = EsdbEventStore.connect(double.connectionString, {
      ...FAST,
      onCheckpointIgnored: (position, reason) => ignored.push({ position, reason }),
    });
  }

  afterEach(async () => {
    await store.close();
    await double.stop();
  });

  const isEvent = (id: string) => (m: SubscriptionMessage) => m.kind === 'event' && m.event.id === id;
  const checkpoints = (messages: SubscriptionMessage[]) =>
    messages.flatMap((m) => (m.kind === 'checkpoint' ? [m.position] : []));

  describe('filter checkpoints', () => {
    it('delivers the first match on a fresh 24.2–24.10.4 server that sent the (2^64-1) checkpoint', async () => {
      await start(['esdb-24.2-to-24.10.4']);
      const subscription = store.subscribeToAll({ eventTypes: [WANTED] });
      const iterator = subscription[Symbol.asyncIterator]();
      const history = await pull(iterator, (m) => m.kind === 'caught-up');

      const wanted = newEvent({}, WANTED);
      await store.append(`fresh-${randomUUID()}`, [wanted], 'no_stream');
      const live = await pull(iterator, isEvent(wanted.id));
      await subscription.close();

      expect(checkpoints([...history, ...live]).every((p) => p.commit < POSITION_LIMIT)).toBe(true);
      expect(ignored).toEqual([
        { position: position(2n ** 64n - 1n), reason: expect.stringContaining('2^63') as string },
      ]);
    });

    it('ignores a checkpoint at the end of the log, where the next event is written', async () => {
      await start(['end-of-log-checkpoint']);
      await store.append(`others-${randomUUID()}`, [newEvent({}, OTHER), newEvent({}, OTHER)], 'no_stream');
      const subscription = store.subscribeToAll({ eventTypes: [WANTED] });
      const iterator = subscription[Symbol.asyncIterator]();
      const history = await pull(iterator, (m) => m.kind === 'caught-up');

      const wanted = newEvent({}, WANTED);
      await store.append(`next-${randomUUID()}`, [wanted], 'no_stream');
      await pull(iterator, isEvent(wanted.id));
      await subscription.close();

      // A consumer resuming from the last checkpoint it was given still gets the event.
      const last = checkpoints(history).at(-1);
      const resumed = store.subscribeToAll({ after: last, eventTypes: [WANTED] });
      const again = await pull(resumed[Symbol.asyncIterator](), (m) => m.kind === 'caught-up');
      await resumed.close();
      expect(again.filter((m) => m.kind === 'event').map((m) => m.kind === 'event' && m.event.id)).toEqual([
        wanted.id,
      ]);
      // Each transition to live brought one.
      expect(ignored).toHaveLength(2);
      for (const { reason } of ignored) expect(reason).toContain('beyond the end of the log');
    });

    it.each<[string, EsdbQuirk[]]>([
      ['window checkpoints', []],
      ['catch-up page checkpoints', ['catch-up-page-checkpoints']],
    ])(
      'gives a slow consumer every match of 10,000 sparse events exactly once (%s)',
      async (_, quirks) => {
        await start(quirks);
        const wanted: string[] = [];
        for (let chunk = 0; chunk < 20; chunk++) {
          const events: NewEvent[] = Array.from({ length: 500 }, (__, i) => {
            const event = newEvent({ i }, (chunk * 500 + i) % 10 === 0 ? WANTED : OTHER);
            if (event.type === WANTED) wanted.push(event.id);
            return event;
          });
          await store.append(`sparse-${chunk}`, events, 'no_stream');
        }
        const subscription = store.subscribeToAll({ eventTypes: [WANTED] });
        const delivered: string[] = [];
        const passed: Position[] = [];
        await within(
          (async () => {
            for await (const message of subscription) {
              if (message.kind === 'caught-up') break;
              if (message.kind === 'checkpoint') passed.push(message.position);
              else delivered.push(message.event.id);
              // A slow handler: the client's buffer fills while checkpoints keep coming.
              await new Promise((resolve) => setTimeout(resolve, 1));
            }
          })(),
          25_000,
          'catch-up',
        );
        await subscription.close();

        expect(delivered).toHaveLength(1_000);
        expect(delivered).toEqual(wanted);
        expect(passed.length).toBeGreaterThan(0);
      },
      30_000,
    );
  });

  describe('positions from clients', () => {
    beforeEach(() => start());

    it('answers a read from inside a record with InvalidPositionError, as the server does', async () => {
      const written = await store.append(`pos-${randomUUID()}`, [newEvent()], 'no_stream');
      const inside = position(written.position.commit + 1n);

      await expect(store.readAll({ after: inside }).next()).rejects.toThrow(
        new InvalidPositionError(formatPosition(inside), 'no record starts there'),
      );
      await expect(store.readAll({ after: written.position }).next()).resolves.toMatchObject({ done: true });
    });

    it.each([
      ['commit before prepare', position(10n, 20n)],
      ['2^63', position(2n ** 63n)],
      ['2^64 - 1', position(2n ** 64n - 1n)],
    ])('refuses %s before asking the server, which would fail on it', async (_, bad) => {
      const reads = double.calls('Read');
      await expect(store.readAll({ after: bad }).next()).rejects.toBeInstanceOf(InvalidPositionError);
      expect(() => store.subscribeToAll({ after: bad })).toThrow(InvalidPositionError);
      expect(double.calls('Read')).toBe(reads);
    });

    it('ends a subscription from inside a record with InvalidPositionError, not endless retries', async () => {
      const written = await store.append(`pos-${randomUUID()}`, [newEvent()], 'no_stream');
      const subscription = store.subscribeToAll({ after: position(written.position.commit + 1n) });

      await expect(nextWithin(subscription[Symbol.asyncIterator](), 5_000)).rejects.toBeInstanceOf(
        InvalidPositionError,
      );
      expect(double.calls('Subscribe')).toBe(1);
    });
  });

  describe.each([
    ['BatchAppend', true],
    ['Append', false],
  ])('transient cluster errors on the %s path', (_, batchAppend) => {
    beforeEach(() => start([], { batchAppend }));

    it.each<[AppendFault, boolean]>([
      ['not-leader', false],
      ['unavailable', false],
      ['deadline-exceeded', false],
      ['not-leader', true],
      ['unavailable', true],
      ['deadline-exceeded', true],
    ])(
      'retries an append after %s (written first: %s) with the same ids, writing once',
      async (fault, afterWrite) => {
        const stream = `retried-${randomUUID()}`;
        const events = [newEvent(), newEvent()];
        double.failAppends(1, fault, { afterWrite });

        const result = await store.append(stream, events, 'no_stream');

        const stored = await store.readStream(stream);
        expect(stored.map((e) => e.id)).toEqual(events.map((e) => e.id));
        expect(result).toEqual({ nextExpectedRevision: 1, position: stored[1].position });
      },
    );

    it.each<[AppendFault, 'any' | 'stream_exists']>([
      ['unavailable', 'any'],
      ['deadline-exceeded', 'stream_exists'],
    ])(
      'answers an append at the end (%s, %s) whose answer was lost as written, writing it once',
      async (fault, expected) => {
        const stream = `at-end-${randomUUID()}`;
        await store.append(stream, [newEvent()], 'no_stream');
        const events = [newEvent(), newEvent()];
        double.failAppends(1, fault, { afterWrite: true });

        const result = await store.append(stream, events, expected);

        const stored = await store.readStream(stream);
        expect(stored.map((e) => e.id).slice(1)).toEqual(events.map((e) => e.id));
        expect(result).toEqual({ nextExpectedRevision: 2, position: stored[2].position });
      },
    );

    it('chains appends at the end that race another client’s after its, refusing none', async () => {
      const other = EsdbEventStore.connect(double.connectionString, FAST);
      try {
        const stream = `raced-${randomUUID()}`;
        const written = Array.from({ length: 12 }, () => newEvent());
        await Promise.all(written.map((event, i) => (i % 2 ? other : store).append(stream, [event], 'any')));

        const stored = await store.readStream(stream);
        expect(stored.map((e) => e.id).sort()).toEqual(written.map((e) => e.id).sort());
        expect(stored.map((e) => e.revision)).toEqual(written.map((_, i) => i));
        await expect(verifyChain(store.readChain(), store.chainScope)).resolves.toMatchObject({
          broken: null,
        });
      } finally {
        await other.close();
      }
    });

    it('gives up after four tries, with the last error', async () => {
      double.failAppends(4, 'unavailable');
      await expect(store.append(`lost-${randomUUID()}`, [newEvent()], 'no_stream')).rejects.toThrow();
      await expect(store.append(`next-${randomUUID()}`, [newEvent()], 'no_stream')).resolves.toBeDefined();
    });
  });

  describe('transient errors on reads', () => {
    beforeEach(() => start());

    it('reads again once after a transient error, and fails on the second', async () => {
      const stream = `read-${randomUUID()}`;
      const events = [newEvent(), newEvent()];
      await store.append(stream, events, 'no_stream');

      double.failReads(1, 'not-leader');
      await expect(store.readStream(stream)).resolves.toHaveLength(2);
      double.failReads(1, 'deadline-exceeded');
      await expect(store.headPosition()).resolves.not.toBeNull();
      double.failReads(2, 'unavailable');
      await expect(store.readStream(stream)).rejects.toThrow();
    });

    it('tries a read again only when the try could end within the operation budget', async () => {
      const stream = `budget-${randomUUID()}`;
      await store.append(stream, [newEvent()], 'no_stream');
      // A try may take the call deadline: 3 s, in a budget of 0.1 s.
      const hurried = EsdbEventStore.connect(double.connectionString, {
        ...FAST,
        operationBudgetMs: 100,
        callDeadlineMs: 3_000,
      });
      try {
        double.failReads(1, 'unavailable');
        await expect(hurried.readStream(stream)).rejects.toBeInstanceOf(UnavailableError);
        await expect(hurried.readStream(stream)).resolves.toHaveLength(1);
      } finally {
        await hurried.close();
      }
    });

    it("fails an append at the stream's end whose read of that end fails, instead of taking the stream for new", async () => {
      const stream = `end-${randomUUID()}`;
      await store.append(stream, [newEvent()], 'no_stream');

      double.failReads(2, 'unavailable');
      await expect(store.append(stream, [newEvent()], 'any')).rejects.toBeInstanceOf(UnavailableError);
      expect(await store.readStream(stream)).toHaveLength(1);
    });
  });
});
