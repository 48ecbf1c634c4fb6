import {
  ANY,
  BACKWARDS,
  binaryEvent,
  END,
  eventTypeFilter,
  EventStoreDBClient,
  excludeSystemEvents,
  jsonEvent,
  MaxAppendSizeExceededError,
  NO_STREAM,
  type Position,
  type ResolvedEvent,
  START,
  STREAM_EXISTS,
  streamNameFilter,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
import { randomUUID } from 'node:crypto';
import { type EsdbDouble, type EsdbDoubleOptions, startEsdbDouble } from './esdb-double';
import { formatUuid, parseUuid } from './wire';

type Subscription = ReturnType<EventStoreDBClient['subscribeToAll']>;

describe('EventStoreDB gRPC double, through @eventstore/db-client', () => {
  let double: EsdbDouble;
  let client: EventStoreDBClient;

  async function start(options: EsdbDoubleOptions = {}): Promise<void> {
    double = await startEsdbDouble(options);
    client = EventStoreDBClient.connectionString(double.connectionString);
  }

  afterEach(async () => {
    await client.dispose();
    await double.stop();
  });

  const event = (type = 'Tested', data: Record<string, unknown> = { at: randomUUID() }) =>
    jsonEvent({ id: randomUUID(), type, data, metadata: { actor: 'system' } });

  async function read(stream: AsyncIterable<ResolvedEvent>): Promise<ResolvedEvent[]> {
    const events: ResolvedEvent[] = [];
    for await (const resolved of stream) events.push(resolved);
    return events;
  }

  const ids = (events: ResolvedEvent[]) => events.map((e) => e.event!.id);
  const userEvents = (events: ResolvedEvent[]) => events.filter((e) => !e.event!.streamId.startsWith('$'));

  /** Collects a subscription's events and caught-up marker in arrival order. */
  function record(subscription: Subscription) {
    const log: string[] = [];
    subscription.on('data', (resolved: ResolvedEvent) => log.push(resolved.event!.id));
    subscription.on('caughtUp', () => log.push('caught-up'));
    const until = (condition: (log: string[]) => boolean) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!condition(log)) return;
          subscription.off('data', check).off('caughtUp', check);
          resolve();
        };
        subscription.on('data', check).on('caughtUp', check).once('error', reject);
        check();
      });
    return { log, until };
  }

  describe('appends', () => {
    it.each([
      ['BatchAppend', true],
      ['Append', false],
    ])('round-trips JSON and binary events through %s', async (method, batchAppend) => {
      await start({ batchAppend });
      const json = event('Json.v1', { text: 'Zoë 🎉', list: [1, null] });
      const binary = binaryEvent({
        id: randomUUID(),
        type: 'Binary.v1',
        data: Uint8Array.from([0, 1, 254, 255]),
      });

      const result = await client.appendToStream('round-trip', [json, binary], {
        expectedRevision: NO_STREAM,
      });
      const [first, second] = await read(client.readStream('round-trip'));

      expect(double.calls(method)).toBe(1);
      expect(double.calls(batchAppend ? 'Append' : 'BatchAppend')).toBe(0);
      expect(result).toEqual({ success: true, nextExpectedRevision: 1n, position: second.event!.position });
      expect(first.event).toMatchObject({
        id: json.id,
        streamId: 'round-trip',
        revision: 0n,
        type: 'Json.v1',
        isJson: true,
        data: { text: 'Zoë 🎉', list: [1, null] },
        metadata: { actor: 'system' },
      });
      expect(Math.abs(first.event!.created.getTime() - Date.now())).toBeLessThan(60_000);
      expect(second.event).toMatchObject({ id: binary.id, type: 'Binary.v1', isJson: false });
      expect(Array.from(second.event!.data as Uint8Array)).toEqual([0, 1, 254, 255]);
      const [p0, p1] = [first.event!.position!, second.event!.position!];
      expect(p1.commit).toBeGreaterThan(p0.commit + 1n);
    });

    it.each([
      ['BatchAppend', true],
      ['Append', false],
    ])('reports wrong expected versions through %s with expected and current', async (_, batchAppend) => {
      await start({ batchAppend });
      await client.appendToStream('conflicts', [event(), event()], { expectedRevision: NO_STREAM });

      const attempts = [
        [client.appendToStream('conflicts', event(), { expectedRevision: NO_STREAM }), 'no_stream', 1n],
        [client.appendToStream('conflicts', event(), { expectedRevision: 5n }), 5n, 1n],
        [
          client.appendToStream('missing', event(), { expectedRevision: STREAM_EXISTS }),
          'stream_exists',
          'no_stream',
        ],
        [client.appendToStream('missing', event(), { expectedRevision: 0n }), 0n, 'no_stream'],
      ] as const;
      for (const [attempt, expected, actual] of attempts) {
        const error: unknown = await attempt.catch((e: unknown) => e);
        expect(error).toBeInstanceOf(WrongExpectedVersionError);
        expect(error).toMatchObject({ expectedVersion: expected, actualVersion: actual });
      }
      expect(await read(client.readStream('conflicts'))).toHaveLength(2);
    });

    it('is idempotent for retried ids at the same place, and conflicts on a partial overlap', async () => {
      await start();
      const events = [event(), event()];
      const first = await client.appendToStream('retries', events, { expectedRevision: NO_STREAM });

      await expect(
        client.appendToStream('retries', events, { expectedRevision: NO_STREAM }),
      ).resolves.toEqual(first);
      await expect(client.appendToStream('retries', events, { expectedRevision: ANY })).resolves.toEqual(
        first,
      );
      await expect(
        client.appendToStream('retries', [events[0], event()], { expectedRevision: NO_STREAM }),
      ).rejects.toBeInstanceOf(WrongExpectedVersionError);
      expect(ids(await read(client.readStream('retries')))).toEqual(events.map((e) => e.id));
    });

    it('assembles a batch the client splits over several requests', async () => {
      await start();
      const events = Array.from({ length: 50 }, () => event('Big', { blob: 'x'.repeat(200) }));

      await client.appendToStream('split', events, { expectedRevision: NO_STREAM, batchAppendSize: 1024 });

      expect(ids(await read(client.readStream('split')))).toEqual(events.map((e) => e.id));
    });

    it.each([
      ['BatchAppend', true],
      ['Append', false],
    ])('refuses an append above the maximum size through %s', async (_, batchAppend) => {
      await start({ batchAppend, maxAppendSize: 1000 });

      const error: unknown = await client
        .appendToStream('too-big', event('Big', { blob: 'x'.repeat(2000) }))
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(MaxAppendSizeExceededError);
      expect(error).toMatchObject({ maxAppendSize: 1000 });
      await expect(read(client.readStream('too-big'))).rejects.toBeInstanceOf(StreamNotFoundError);
    });
  });

  describe('reads', () => {
    const written: string[] = [];
    beforeEach(async () => {
      await start();
      written.length = 0;
      for (let i = 0; i < 5; i++) {
        const next = event('Read', { i });
        written.push(next.id);
        await client.appendToStream(i % 2 === 0 ? 'read-a' : 'read-b', next);
      }
    });

    it('reads a stream forwards and backwards, from revisions, with counts', async () => {
      const a = [written[0], written[2], written[4]];
      expect(ids(await read(client.readStream('read-a')))).toEqual(a);
      expect(ids(await read(client.readStream('read-a', { fromRevision: 1n })))).toEqual(a.slice(1));
      expect(ids(await read(client.readStream('read-a', { fromRevision: 1n, maxCount: 1 })))).toEqual([a[1]]);
      expect(ids(await read(client.readStream('read-a', { fromRevision: 9n })))).toEqual([]);
      expect(
        ids(await read(client.readStream('read-a', { direction: BACKWARDS, fromRevision: END }))),
      ).toEqual([...a].reverse());
      expect(
        ids(await read(client.readStream('read-a', { direction: BACKWARDS, fromRevision: 1n }))),
      ).toEqual([a[1], a[0]]);
    });

    it('answers a missing stream with stream_not_found', async () => {
      await expect(read(client.readStream('never-written'))).rejects.toBeInstanceOf(StreamNotFoundError);
    });

    it('reads $all forwards including the start position, and backwards from the end', async () => {
      const all = userEvents(await read(client.readAll()));
      expect(ids(all)).toEqual(written);
      expect((await read(client.readAll())).length).toBeGreaterThan(written.length);

      const fromThird = await read(client.readAll({ fromPosition: all[2].event!.position, maxCount: 2 }));
      expect(ids(fromThird)).toEqual(written.slice(2, 4));

      const newest = await read(client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 2 }));
      expect(ids(newest)).toEqual([written[4], written[3]]);
    });
  });

  describe('subscriptions', () => {
    beforeEach(() => start());

    it('confirms, replays history, announces caught-up, then delivers live events', async () => {
      const history = [event(), event()];
      await client.appendToStream('sub-all', history);
      const subscription = client.subscribeToAll({ fromPosition: START, filter: excludeSystemEvents() });
      const confirmed = new Promise<void>((resolve) => subscription.once('confirmation', () => resolve()));
      const { log, until } = record(subscription);

      await confirmed;
      await until((l) => l.includes('caught-up'));
      const live = event();
      await client.appendToStream('sub-all', live);
      await until((l) => l.includes(live.id));
      await subscription.unsubscribe();

      expect(log).toEqual([...history.map((e) => e.id), 'caught-up', live.id]);
      expect(subscription.id).toEqual(expect.any(String));
    });

    it('starts after the given position and revision (exclusive)', async () => {
      const events = [event(), event(), event()];
      await client.appendToStream('sub-exclusive', events);
      const [first] = await read(client.readStream('sub-exclusive'));
      const fromAll = client.subscribeToAll({ fromPosition: first.event!.position as Position });
      const fromStream = client.subscribeToStream('sub-exclusive', { fromRevision: 1n });
      const all = record(fromAll);
      const stream = record(fromStream as unknown as Subscription);

      await Promise.all([
        all.until((l) => l.includes('caught-up')),
        stream.until((l) => l.includes('caught-up')),
      ]);
      await Promise.all([fromAll.unsubscribe(), fromStream.unsubscribe()]);

      expect(all.log).toEqual([events[1].id, events[2].id, 'caught-up']);
      expect(stream.log).toEqual([events[2].id, 'caught-up']);
    });

    it('filters on event type and stream name by prefix or regex, with checkpoints', async () => {
      const [order, invoice, other] = [event('OrderPlaced'), event('InvoiceSent'), event('Other')];
      await client.appendToStream('shop-1', order);
      await client.appendToStream('billing-1', invoice);
      await client.appendToStream('misc-1', other);
      const checkpoints: Position[] = [];
      const byType = client.subscribeToAll({
        filter: eventTypeFilter({
          prefixes: ['Order', 'Invoice'],
          maxSearchWindow: 2,
          checkpointReached: (_, position) => void checkpoints.push(position),
        }),
      });
      const byStream = client.subscribeToAll({ filter: streamNameFilter({ regex: '^billing-' }) });
      const types = record(byType);
      const streams = record(byStream);

      await Promise.all([
        types.until((l) => l.includes('caught-up')),
        streams.until((l) => l.includes('caught-up')),
      ]);
      await Promise.all([byType.unsubscribe(), byStream.unsubscribe()]);

      expect(types.log).toEqual([order.id, invoice.id, 'caught-up']);
      expect(streams.log).toEqual([invoice.id, 'caught-up']);
      // Three seeded system events and three of ours, scanned two at a time.
      expect(checkpoints).toHaveLength(3);
      const all = await read(client.readAll());
      expect(checkpoints).toEqual([1, 3, 5].map((i) => all[i].event!.position));
    });

    it('stops serving a subscription the client cancels', async () => {
      const subscription = client.subscribeToAll();
      await record(subscription).until((l) => l.includes('caught-up'));
      expect(double.activeSubscriptions()).toBe(1);

      await subscription.unsubscribe();
      await new Promise<void>((resolve) => {
        const check = () => (double.activeSubscriptions() === 0 ? resolve() : setTimeout(check, 5));
        check();
      });
      await client.appendToStream('after-cancel', event());
      expect(double.activeSubscriptions()).toBe(0);
    });
  });

  describe('faults', () => {
    beforeEach(() => start());

    it('drops live subscriptions with UNAVAILABLE on request', async () => {
      const subscription = client.subscribeToAll();
      await record(subscription).until((l) => l.includes('caught-up'));
      const failed = new Promise<unknown>((resolve) => subscription.once('error', resolve));

      double.dropSubscriptions();

      await expect(failed).resolves.toBeInstanceOf(UnavailableError);
      expect(double.activeSubscriptions()).toBe(0);
    });

    it('refuses connections for a while, then serves the same log on the same port', async () => {
      const before = event();
      await client.appendToStream('restart', before);

      const restarting = double.refuseConnectionsFor(300);
      await expect(read(client.readStream('restart'))).rejects.toBeInstanceOf(UnavailableError);
      await restarting;

      expect(ids(await read(client.readStream('restart')))).toEqual([before.id]);
    });
  });
});

describe('wire UUIDs', () => {
  it('round-trips the structured encoding', () => {
    const id = randomUUID();
    expect(parseUuid(formatUuid(id, true))).toBe(id);
    expect(parseUuid(formatUuid('ffffffff-ffff-ffff-8000-000000000000', true))).toBe(
      'ffffffff-ffff-ffff-8000-000000000000',
    );
    expect(parseUuid(formatUuid(id, false))).toBe(id);
  });
});
