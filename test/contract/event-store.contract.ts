import {
  comparePositions,
  type EventStore,
  type ExpectedRevision,
  type LogQuery,
  type NewEvent,
  type Position,
  type RecordedEvent,
  storedLinkBreak,
  verifyChain,
  WrongExpectedRevisionError,
} from '@chronicle/event-store';
import { randomUUID } from 'node:crypto';
import {
  collect,
  describeMessages,
  newEvent,
  newEvents,
  nextWithin,
  pullUntil,
  within,
} from './support/events';

export interface EventStoreHarness {
  store: EventStore;
  /**
   * A second, independent client of the same store, as another process would have. The harness
   * closes every client it opened in `cleanup`.
   */
  openAnother(): Promise<EventStore>;
  cleanup(): Promise<void>;
}

/**
 * The behaviour every EventStore adapter must have. The store may be shared with other data and
 * other writers: tests use fresh streams and read only after the head they saw first.
 */
export function describeEventStoreContract(
  adapterName: string,
  setup: () => Promise<EventStoreHarness>,
): void {
  describe(`EventStore contract: ${adapterName}`, () => {
    let harness: EventStoreHarness;
    let store: EventStore;

    beforeAll(async () => {
      harness = await setup();
      store = harness.store;
    });

    afterAll(async () => {
      await harness?.cleanup();
    });

    const streamName = () => `contract-${randomUUID()}`;

    /** Events after `head` (exclusive) that belong to `streams`, in global order. */
    async function readAllOf(streams: string[], after: Position | null): Promise<RecordedEvent[]> {
      const wanted = new Set(streams);
      const events = await collect(store.readAll(after ? { after } : {}));
      return events.filter((e) => wanted.has(e.stream));
    }

    async function expectConflict(
      append: Promise<unknown>,
      stream: string,
      expected: ExpectedRevision,
      actual: number | 'no_stream',
    ): Promise<void> {
      const error = await append.then(
        () => {
          throw new Error(`append with expected revision ${expected} succeeded`);
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(WrongExpectedRevisionError);
      expect(error).toMatchObject({ stream, expected, actual });
    }

    function expectIncreasing(positions: Position[]): void {
      for (let i = 1; i < positions.length; i++) {
        expect(comparePositions(positions[i - 1], positions[i])).toBe(-1);
      }
    }

    describe('append and readStream', () => {
      it('round-trips type, data, metadata and unicode, with 0-based revisions', async () => {
        const stream = streamName();
        const first = newEvent(
          { text: 'Zoë 日本語 🎉 "quoted" \\ \n', nested: { list: [1, 2.5, null, true], empty: {} } },
          'UnicodeTested.v1',
        );
        first.metadata = {
          actor: randomUUID(),
          correlationId: 'req-Ωmega-1',
          causationId: randomUUID(),
          occurredAt: '2026-11-22T09:15:00.000Z',
        };
        const second = newEvent({ n: 2 });

        const result = await store.append(stream, [first, second], 'no_stream');
        const read = await store.readStream(stream);

        expect(result.nextExpectedRevision).toBe(1);
        expect(read).toHaveLength(2);
        expect(read[0]).toMatchObject({ ...first, stream, revision: 0 });
        expect(read[1]).toMatchObject({ ...second, stream, revision: 1 });
        expect(read[0].data).toEqual(first.data);
        expect(read[0].metadata).toEqual(first.metadata);
        expectIncreasing(read.map((e) => e.position));
        expect(read[1].position).toEqual(result.position);
      });

      it('reads a missing stream as an empty list', async () => {
        await expect(store.readStream(streamName())).resolves.toEqual([]);
      });

      it('reads from a revision on', async () => {
        const stream = streamName();
        await store.append(stream, newEvents(5), 'no_stream');

        const fromTwo = await store.readStream(stream, { fromRevision: 2 });

        expect(fromTwo.map((e) => e.revision)).toEqual([2, 3, 4]);
        expect(fromTwo.map((e) => e.data)).toEqual([{ index: 2 }, { index: 3 }, { index: 4 }]);
        await expect(store.readStream(stream, { fromRevision: 5 })).resolves.toEqual([]);
      });

      it('keeps the order of successive appends and continues revisions', async () => {
        const stream = streamName();
        const appended: NewEvent[] = [];
        let expected: ExpectedRevision = 'no_stream';
        for (let i = 0; i < 4; i++) {
          const batch = newEvents(i % 2 === 0 ? 1 : 2);
          appended.push(...batch);
          expected = (await store.append(stream, batch, expected)).nextExpectedRevision;
        }

        const read = await store.readStream(stream);

        expect(expected).toBe(5);
        expect(read.map((e) => e.id)).toEqual(appended.map((e) => e.id));
        expect(read.map((e) => e.revision)).toEqual([0, 1, 2, 3, 4, 5]);
        expectIncreasing(read.map((e) => e.position));
      });

      it('reports the head position and answers ping', async () => {
        const result = await store.append(streamName(), [newEvent()], 'no_stream');

        const head = await store.headPosition();

        expect(head).not.toBeNull();
        expect(comparePositions(head!, result.position)).toBeGreaterThanOrEqual(0);
        await expect(store.ping()).resolves.toBeUndefined();
      });
    });

    describe('expected revision', () => {
      it('no_stream: succeeds on a new stream, conflicts with the actual revision otherwise', async () => {
        const stream = streamName();
        await expect(store.append(stream, newEvents(2), 'no_stream')).resolves.toMatchObject({
          nextExpectedRevision: 1,
        });

        await expectConflict(store.append(stream, [newEvent()], 'no_stream'), stream, 'no_stream', 1);
      });

      it('stream_exists: conflicts with no_stream on a new stream, succeeds on an existing one', async () => {
        const stream = streamName();
        await expectConflict(
          store.append(stream, [newEvent()], 'stream_exists'),
          stream,
          'stream_exists',
          'no_stream',
        );
        await expect(store.readStream(stream)).resolves.toEqual([]);

        await store.append(stream, [newEvent()], 'no_stream');
        await expect(store.append(stream, [newEvent()], 'stream_exists')).resolves.toMatchObject({
          nextExpectedRevision: 1,
        });
      });

      it('any: succeeds whether or not the stream exists', async () => {
        const stream = streamName();
        await expect(store.append(stream, [newEvent()], 'any')).resolves.toMatchObject({
          nextExpectedRevision: 0,
        });
        await expect(store.append(stream, newEvents(2), 'any')).resolves.toMatchObject({
          nextExpectedRevision: 2,
        });
      });

      it('exact revision: succeeds when it is the last revision, conflicts otherwise', async () => {
        const stream = streamName();
        await expectConflict(store.append(stream, [newEvent()], 0), stream, 0, 'no_stream');
        await store.append(stream, newEvents(2), 'no_stream');

        await expectConflict(store.append(stream, [newEvent()], 0), stream, 0, 1);
        await expectConflict(store.append(stream, [newEvent()], 2), stream, 2, 1);
        await expect(store.append(stream, [newEvent()], 1)).resolves.toMatchObject({
          nextExpectedRevision: 2,
        });
        await expect(store.readStream(stream)).resolves.toHaveLength(3);
      });

      it('writes nothing of a multi-event append that conflicts', async () => {
        const stream = streamName();
        const original = newEvent();
        await store.append(stream, [original], 'no_stream');

        await expectConflict(store.append(stream, newEvents(3), 5), stream, 5, 0);
        await expectConflict(store.append(stream, newEvents(3), 'no_stream'), stream, 'no_stream', 0);

        expect((await store.readStream(stream)).map((e) => e.id)).toEqual([original.id]);
      });

      it('lets exactly one of concurrent appends with the same expected revision win', async () => {
        const stream = streamName();
        const other = await harness.openAnother();
        await store.append(stream, [newEvent()], 'no_stream');
        const candidates = Array.from({ length: 6 }, () => [newEvent(), newEvent()]);

        const outcomes = await Promise.allSettled(
          candidates.map((events, i) => (i % 2 === 0 ? store : other).append(stream, events, 0)),
        );

        const winners = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
        expect(winners).toHaveLength(1);
        for (const outcome of outcomes) {
          if (outcome.status === 'rejected') {
            expect(outcome.reason).toBeInstanceOf(WrongExpectedRevisionError);
            expect(outcome.reason).toMatchObject({ stream, expected: 0, actual: 2 });
          }
        }
        const stored = await store.readStream(stream, { fromRevision: 1 });
        expect(stored.map((e) => e.id)).toEqual(candidates[winners[0]].map((e) => e.id));
      });
    });

    describe('idempotent retries', () => {
      it('accepts a retried no_stream append once, without duplicates', async () => {
        const stream = streamName();
        const events = newEvents(2);
        const head = await store.headPosition();

        const first = await store.append(stream, events, 'no_stream');
        const retry = await store.append(stream, events, 'no_stream');

        expect(retry).toEqual(first);
        expect((await store.readStream(stream)).map((e) => e.id)).toEqual(events.map((e) => e.id));
        expect(await readAllOf([stream], head)).toHaveLength(2);
      });

      it('accepts a retried exact-revision append, even after the stream moved on', async () => {
        const stream = streamName();
        await store.append(stream, [newEvent()], 'no_stream');
        const events = newEvents(2);

        const first = await store.append(stream, events, 0);
        const retry = await store.append(stream, events, 0);
        await store.append(stream, [newEvent()], 2);
        const lateRetry = await store.append(stream, events, 0);

        expect(retry).toEqual(first);
        expect(lateRetry).toEqual(first);
        expect((await store.readStream(stream)).map((e) => e.revision)).toEqual([0, 1, 2, 3]);
      });
    });

    describe('recorded time and hash chain', () => {
      it('records a time of its own that never decreases with position, whatever the writer says', async () => {
        const streams = [streamName(), streamName()];
        const head = await store.headPosition();
        const other = await harness.openAnother();
        const started = Date.now();
        const backdated = newEvent();
        backdated.metadata.occurredAt = '2001-03-01T00:00:00.000Z';
        await store.append(streams[0], [backdated], 'no_stream');
        await Promise.all([
          ...Array.from({ length: 5 }, (_, i) => store.append(streams[0], [newEvent()], 'any').then(() => i)),
          ...Array.from({ length: 5 }, () => other.append(streams[1], [newEvent()], 'any')),
        ]);

        const read = await readAllOf(streams, head);

        expect(read).toHaveLength(11);
        const times = read.map((e) => e.recordedAt);
        for (const time of times) expect(time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        expect([...times].sort()).toEqual(times);
        expect(Date.parse(times[0])).toBeGreaterThanOrEqual(started - 60_000);
        expect(read[0].metadata.occurredAt).toBe('2001-03-01T00:00:00.000Z');
      });

      it("chains every event's hash to its predecessor in the store's scope, across clients", async () => {
        const [a, b] = [streamName(), streamName()];
        const other = await harness.openAnother();
        await store.append(a, newEvents(2), 'no_stream');
        await other.append(b, newEvents(2), 'no_stream');
        await store.append(b, [newEvent()], 1);
        await other.append(a, [newEvent()], 'stream_exists');

        const verification = await verifyChain(store.readChain(), store.chainScope);
        const events = [...(await store.readStream(a)), ...(await store.readStream(b))];
        const links = new Map<string, string>();
        for await (const link of store.readChain()) links.set(link.id, link.hash);

        expect(verification).toMatchObject({ broken: null, sealMismatch: null });
        expect(verification.events).toBeGreaterThanOrEqual(6);
        expect(new Set(events.map((e) => e.hash)).size).toBe(6);
        for (const event of events) {
          expect(event.hash).toMatch(/^[0-9a-f]{64}$/);
          expect(links.get(event.id)).toBe(event.hash);
        }
      });

      it('reads the chain after a position: the links that follow it, in order, and none before', async () => {
        const stream = streamName();
        await store.append(stream, newEvents(3), 'no_stream');
        const [first, ...rest] = await store.readStream(stream);
        const after: string[] = [];
        for await (const link of store.readChain(first.position)) after.push(link.id);

        expect(after.slice(-2)).toEqual(rest.map((event) => event.id));
        expect(after).not.toContain(first.id);
      });

      it('gives each event read its link as stored and the link it chains to, which it follows', async () => {
        const [a, b] = [streamName(), streamName()];
        await store.append(a, newEvents(2), 'no_stream');
        await store.append(b, [newEvent()], 'no_stream');
        await store.append(a, [newEvent()], 1);
        const events = [...(await store.readStream(a)), ...(await store.readStream(b))];

        const linked = await store.readChainLinks(events);

        expect(linked).toHaveLength(4);
        for (const [index, event] of events.entries()) {
          const { link, previous } = linked[index];
          expect(link).toMatchObject({ id: event.id, stream: event.stream, hash: event.hash });
          expect(storedLinkBreak(store.chainScope, event, linked[index])).toBeNull();
          // The log's event before it (embedded), or the stream's (EventStoreDB): never a later one.
          if (store.chainScope === 'stream') {
            expect(previous?.id ?? null).toBe(event.revision === 0 ? null : events[index - 1].id);
          } else {
            const before = Number(event.position.commit) - 1;
            expect(previous === null ? null : Number(previous.position)).toBe(before === 0 ? null : before);
          }
        }
      });

      it('gives a retried append the hashes it had: the chain holds after the retry', async () => {
        const stream = streamName();
        await store.append(stream, [newEvent()], 'no_stream');
        const events = newEvents(2);
        await store.append(stream, events, 0);
        const before = await store.readStream(stream);
        await store.append(stream, events, 0);

        expect(await store.readStream(stream)).toEqual(before);
        await expect(verifyChain(store.readChain(), store.chainScope)).resolves.toMatchObject({
          broken: null,
        });
      });
    });

    describe('queryLog', () => {
      /** Every page of `query` after `head`, following `next`, as event ids per page. */
      async function pagesOf(query: Omit<LogQuery, 'after'>, after: Position | null): Promise<string[][]> {
        const pages: string[][] = [];
        let next: Position | null | undefined = after ?? undefined;
        do {
          const page = await store.queryLog({ ...query, after: next ?? undefined });
          pages.push(page.events.map((e) => e.id));
          next = page.next;
        } while (next);
        return pages;
      }

      it('answers an actor, a correlation id and several types, filling pages up to the limit', async () => {
        const head = await store.headPosition();
        const [actor, correlationId] = [randomUUID(), randomUUID()];
        const stream = streamName();
        const events = Array.from({ length: 12 }, (_, i) => {
          const event = newEvent(
            { i },
            i % 3 === 0 ? 'QueriedA.v1' : i % 3 === 1 ? 'QueriedB.v1' : 'QueriedC.v1',
          );
          if (i % 4 === 0) event.metadata.actor = actor;
          if (i === 5) event.metadata.correlationId = correlationId;
          return event;
        });
        for (let i = 0; i < events.length; i++)
          await store.append(stream, [events[i]], i === 0 ? 'no_stream' : i - 1);
        const ids = (indexes: number[]) => indexes.map((i) => events[i].id);

        expect((await pagesOf({ limit: 2, actor }, head)).flat()).toEqual(ids([0, 4, 8]));
        expect(await pagesOf({ limit: 2, actor }, head)).toEqual([ids([0, 4]), ids([8])]);
        expect(await pagesOf({ limit: 5, correlationId }, head)).toEqual([ids([5])]);
        expect(await pagesOf({ limit: 3, eventTypes: ['QueriedA.v1', 'QueriedC.v1'] }, head)).toEqual([
          ids([0, 2, 3]),
          ids([5, 6, 8]),
          ids([9, 11]),
        ]);
        expect(await pagesOf({ limit: 3, actor, eventTypes: ['QueriedB.v1'] }, head)).toEqual([ids([4])]);
        expect(await pagesOf({ limit: 1, actor: randomUUID() }, head)).toEqual([[]]);
      });

      it('answers since and until on the recorded time: since <= recordedAt < until', async () => {
        const stream = streamName();
        const head = await store.headPosition();
        for (let i = 0; i < 3; i++) {
          await store.append(stream, [newEvent({ i })], i === 0 ? 'no_stream' : i - 1);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        const written = await store.readStream(stream);
        const [first, second, third] = written.map((e) => e.recordedAt);
        const query = { limit: 100, eventTypes: ['ContractTested.v1'] };
        const of = async (bounds: { since?: string; until?: string }) =>
          (await pagesOf({ ...query, ...bounds }, head))
            .flat()
            .filter((id) => written.some((e) => e.id === id));

        expect(first < second && second < third).toBe(true);
        expect(await of({ since: second })).toEqual([written[1].id, written[2].id]);
        expect(await of({ until: second })).toEqual([written[0].id]);
        expect(await of({ since: first, until: third })).toEqual([written[0].id, written[1].id]);
        expect(await of({ since: '2999-01-01T00:00:00.000Z' })).toEqual([]);
      });
    });

    describe('readAll', () => {
      it('returns events of all streams in append order with increasing positions', async () => {
        const [a, b] = [streamName(), streamName()];
        const head = await store.headPosition();
        const appended: string[] = [];
        for (const [stream, expected] of [
          [a, 'no_stream'],
          [b, 'no_stream'],
          [a, 1],
          [b, 1],
        ] as const) {
          const batch = newEvents(2);
          await store.append(stream, batch, expected);
          appended.push(...batch.map((e) => e.id));
        }

        const read = await readAllOf([a, b], head);

        expect(read.map((e) => e.id)).toEqual(appended);
        expectIncreasing(read.map((e) => e.position));
        const viaStream = [...(await store.readStream(a)), ...(await store.readStream(b))];
        for (const event of read) {
          expect(event).toEqual(viaStream.find((e) => e.id === event.id));
        }
      });

      it('reads after a position (exclusive) and honours a limit', async () => {
        const stream = streamName();
        const { position: p0 } = await store.append(stream, [newEvent()], 'no_stream');
        const { position: p1 } = await store.append(stream, [newEvent()], 0);
        await store.append(stream, [newEvent()], 1);
        const written = await store.readStream(stream);

        const afterFirst = await readAllOf([stream], p0);
        const limited = await collect(store.readAll({ after: p0, limit: 1 }));
        const none = await collect(store.readAll({ after: p0, limit: 0 }));

        expect(afterFirst.map((e) => e.id)).toEqual([written[1].id, written[2].id]);
        expect(limited).toHaveLength(1);
        expect(comparePositions(limited[0].position, p0)).toBe(1);
        expect(comparePositions(limited[0].position, p1)).toBeLessThanOrEqual(0);
        expect(none).toEqual([]);
      });

      it('reads only the event types asked for, after a position and within a limit', async () => {
        const stream = streamName();
        const wanted = `Wanted${randomUUID().replace(/-/g, '')}.v1`;
        const start = (await store.headPosition()) ?? undefined;
        const events = [newEvent(undefined, wanted), newEvent(), newEvent(undefined, wanted), newEvent()];
        events.push(newEvent(undefined, wanted));
        await store.append(stream, events, 'no_stream');

        const all = await collect(store.readAll({ after: start, eventTypes: [wanted] }));
        const two = await collect(store.readAll({ after: start, eventTypes: [wanted], limit: 2 }));
        const later = await collect(store.readAll({ after: all[0].position, eventTypes: [wanted] }));
        // One at a time, each read after the last one read (AccountDirectory pages so).
        const oneByOne: RecordedEvent[] = [];
        for (let after = start; ;) {
          const page = await collect(store.readAll({ after, eventTypes: [wanted], limit: 1 }));
          expect(page.length).toBeLessThanOrEqual(1);
          if (page.length === 0) break;
          oneByOne.push(page[0]);
          after = page[0].position;
        }

        expect(all.map((e) => e.id)).toEqual([events[0].id, events[2].id, events[4].id]);
        expect(oneByOne).toEqual(all);
        expect(two.map((e) => e.id)).toEqual([events[0].id, events[2].id]);
        expect(later.map((e) => e.id)).toEqual([events[2].id, events[4].id]);
      });

      it('reads every event but those of the types left out, after a position and within a limit', async () => {
        const stream = streamName();
        const skipped = `Skipped${randomUUID().replace(/-/g, '')}.v1`;
        const kept = `Kept${randomUUID().replace(/-/g, '')}.v1`;
        const start = (await store.headPosition()) ?? undefined;
        const events = [newEvent(undefined, kept), newEvent(undefined, skipped), newEvent(undefined, kept)];
        await store.append(stream, events, 'no_stream');

        const all = await collect(store.readAll({ after: start, exceptTypes: [skipped, 'Absent.v1'] }));
        const one = await collect(store.readAll({ after: start, exceptTypes: [skipped], limit: 1 }));
        const everything = await collect(store.readAll({ after: start, exceptTypes: [] }));

        // Other suites may append meanwhile: only this stream's events are compared.
        const ours = (read: RecordedEvent[]) => read.filter((e) => e.stream === stream).map((e) => e.id);
        expect(ours(all)).toEqual([events[0].id, events[2].id]);
        expect(one.map((e) => e.id)).toEqual([events[0].id]);
        expect(ours(everything)).toEqual(events.map((e) => e.id));
        await expect(collect(store.readAll({ eventTypes: [kept], exceptTypes: [skipped] }))).rejects.toThrow(
          new RangeError('eventTypes and exceptTypes exclude each other'),
        );
      });

      it('refuses a read with an argument out of range, before reading', async () => {
        await expect(store.readStream(streamName(), { fromRevision: -1 })).rejects.toThrow(
          new RangeError('fromRevision must be a non-negative integer, got -1'),
        );
        await expect(collect(store.readAll({ limit: 1.5 }))).rejects.toThrow(
          new RangeError('limit must be a non-negative integer, got 1.5'),
        );
        await expect(store.queryLog({ limit: 0 })).rejects.toThrow(
          new RangeError('limit must be a positive integer, got 0'),
        );
      });

      it('reads nothing after the head', async () => {
        await store.append(streamName(), [newEvent()], 'no_stream');
        const head = await store.headPosition();

        const after = await collect(store.readAll({ after: head!, limit: 10 }));

        // Another writer may append meanwhile; nothing at or before the head may come back.
        expect(after.filter((event) => comparePositions(event.position, head!) <= 0)).toEqual([]);
      });
    });

    describe('subscribeToAll', () => {
      it('delivers history after the checkpoint (exclusive), then caught-up, then live events', async () => {
        const stream = streamName();
        const history = newEvents(3);
        await store.append(stream, history, 'no_stream');
        const [checkpoint] = await store.readStream(stream);
        const subscription = store.subscribeToAll({ after: checkpoint.position });
        const iterator = subscription[Symbol.asyncIterator]();
        const streams = new Set([stream]);

        try {
          const untilLive = await pullUntil(iterator, streams, (m) => m.kind === 'caught-up');
          expect(describeMessages(untilLive)).toEqual([
            `ev:${history[1].id}`,
            `ev:${history[2].id}`,
            'caught-up',
          ]);

          const live = [newEvent(), ...newEvents(2)];
          const arriving = pullUntil(
            iterator,
            streams,
            (m) => m.kind === 'event' && m.event.id === live[2].id,
          );
          await store.append(stream, [live[0]], 2);
          await store.append(stream, live.slice(1), 3);
          const liveMessages = await arriving;

          expect(describeMessages(liveMessages)).toEqual(live.map((e) => `ev:${e.id}`));
          const delivered = liveMessages.flatMap((m) => (m.kind === 'event' ? [m.event] : []));
          expect(delivered.map((e) => e.revision)).toEqual([3, 4, 5]);
          expect(delivered[0]).toMatchObject({ ...live[0], stream });
          expectIncreasing([checkpoint.position, ...delivered.map((e) => e.position)]);
        } finally {
          await subscription.close();
        }
      });

      it('delivers only the event types asked for, in history and live, then caught-up', async () => {
        const stream = streamName();
        const wanted = `Wanted${randomUUID().replace(/-/g, '')}.v1`;
        const other = `Other${randomUUID().replace(/-/g, '')}.v1`;
        const start = (await store.headPosition()) ?? undefined;
        const history = [newEvent(undefined, other), newEvent(undefined, wanted), newEvent(undefined, other)];
        await store.append(stream, history, 'no_stream');
        const subscription = store.subscribeToAll({ after: start, eventTypes: [wanted, 'Absent.v1'] });
        const iterator = subscription[Symbol.asyncIterator]();
        const streams = new Set([stream]);

        try {
          const untilLive = await pullUntil(iterator, streams, (m) => m.kind === 'caught-up');
          expect(describeMessages(untilLive)).toEqual([`ev:${history[1].id}`, 'caught-up']);

          const live = [newEvent(undefined, other), newEvent(undefined, wanted)];
          const arriving = pullUntil(
            iterator,
            streams,
            (m) => m.kind === 'event' && m.event.id === live[1].id,
          );
          await store.append(stream, live, 2);
          const delivered = await arriving;
          expect(describeMessages(delivered)).toEqual([`ev:${live[1].id}`]);
          expect(delivered[0]).toMatchObject({ kind: 'event', event: { type: wanted, revision: 4, stream } });
        } finally {
          await subscription.close();
        }
      });

      it('reports how far a filtered subscription has scanned past events it skips', async () => {
        const stream = streamName();
        const wanted = `Wanted${randomUUID().replace(/-/g, '')}.v1`;
        const subscription = store.subscribeToAll({
          after: (await store.headPosition()) ?? undefined,
          eventTypes: [wanted],
        });
        const iterator = subscription[Symbol.asyncIterator]();
        try {
          await pullUntil(iterator, new Set([stream]), (m) => m.kind === 'caught-up');
          const before = await store.headPosition();
          // More than two server search windows (EventStoreDB: 32 events) of other types: a
          // checkpoint may be held until the server has sent one beyond it (EsdbSubscription).
          await store.append(stream, newEvents(70), 'no_stream');
          const head = await store.headPosition();
          let checkpoint: Position | null = null;
          for (const deadline = Date.now() + 3000; checkpoint === null && Date.now() < deadline;) {
            const next = await nextWithin(iterator, Math.max(deadline - Date.now(), 1));
            if (next.done) throw new Error('the subscription ended early');
            if (next.value.kind === 'event') expect(next.value.event.stream).not.toBe(stream);
            if (next.value.kind === 'checkpoint') checkpoint = next.value.position;
          }
          expect(checkpoint).not.toBeNull();
          expect(comparePositions(checkpoint!, before!)).toBe(1);
          expect(comparePositions(checkpoint!, head!)).toBeLessThanOrEqual(0);
        } finally {
          await subscription.close();
        }
      });

      it('sees events appended through another client within a second', async () => {
        const stream = streamName();
        const other = await harness.openAnother();
        const subscription = store.subscribeToAll({ after: (await store.headPosition()) ?? undefined });
        const iterator = subscription[Symbol.asyncIterator]();
        const streams = new Set([stream]);

        try {
          await pullUntil(iterator, streams, (m) => m.kind === 'caught-up');
          for (const expected of ['no_stream', 0] as const) {
            const event = newEvent();
            // Pull first, so the subscription is waiting for live events when the append lands.
            const arriving = pullUntil(iterator, streams, () => true, 1000);
            await other.append(stream, [event], expected);
            const messages = await arriving;
            expect(describeMessages(messages)).toEqual([`ev:${event.id}`]);
          }
        } finally {
          await subscription.close();
        }
      });

      it('ends the iteration when closed, also while waiting for live events', async () => {
        const stream = streamName();
        await store.append(stream, [newEvent()], 'no_stream');
        const subscription = store.subscribeToAll({ after: (await store.headPosition()) ?? undefined });
        let sawCaughtUp = false;
        let markCaughtUp!: () => void;
        const caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));
        const consumed = (async () => {
          for await (const message of subscription) {
            if (message.kind === 'caught-up') {
              sawCaughtUp = true;
              markCaughtUp();
            }
          }
        })();

        await within(caughtUp, 5000, 'caught-up');
        await subscription.close();
        await within(consumed, 1000, 'end of the iteration');
        await subscription.close();

        expect(sawCaughtUp).toBe(true);
        const iterator = subscription[Symbol.asyncIterator]();
        await expect(nextWithin(iterator, 1000)).resolves.toMatchObject({ done: true });
      });
    });
  });
}
