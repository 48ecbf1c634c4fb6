import type {
  AllStreamResolvedEvent,
  EventStoreDBClient,
  SubscribeToAllOptions,
} from '@eventstore/db-client';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { SubscriptionMessage } from '../event-store.port';
import { position, type Position } from '../position';
import { EsdbSubscription, retryDelay } from './esdb-subscription';

type CheckpointReached = (subscription: unknown, position: Position) => Promise<void>;

/** Stands in for the client's subscription stream, so buffering and drops happen on cue. */
class FakeServerSubscription extends Readable {
  unsubscribed = false;

  constructor() {
    super({ objectMode: true, read: () => undefined });
  }

  unsubscribe(): Promise<void> {
    this.unsubscribed = true;
    return Promise.resolve();
  }
}

function resolved(commit: number, stream = 'unit-1', type = 'UnitTested.v1'): AllStreamResolvedEvent {
  return {
    event: {
      streamId: stream,
      id: randomUUID(),
      revision: BigInt(commit),
      type,
      data: { commit },
      metadata: {
        actor: 'system',
        correlationId: 'c',
        causationId: null,
        occurredAt: '2026-01-01T00:00:00.000Z',
      },
      isJson: true,
      created: new Date(0),
      position: { commit: BigInt(commit), prepare: BigInt(commit) },
    },
  };
}

function fakeClient(logEnd = 1_000) {
  const opened: { options: SubscribeToAllOptions; stream: FakeServerSubscription }[] = [];
  const waiters: (() => void)[] = [];
  const client = {
    // The backwards read of one record that tells where the log ends.
    readAll: async function* () {
      await Promise.resolve();
      yield resolved(logEnd, '$stats-node', '$statsCollected');
    },
    subscribeToAll(options: SubscribeToAllOptions) {
      const stream = new FakeServerSubscription();
      opened.push({ options, stream });
      waiters.splice(0).forEach((wake) => wake());
      return stream;
    },
  } as unknown as EventStoreDBClient;
  const nextOpened = async (count: number) => {
    while (opened.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
    return opened[count - 1];
  };
  return { client, opened, nextOpened };
}

function subscribe(client: EventStoreDBClient, after?: Position) {
  return new EsdbSubscription(client, after, { initialDelayMs: 1, maxDelayMs: 5 }, () => undefined);
}

async function take(iterator: AsyncIterator<SubscriptionMessage>, count: number): Promise<string[]> {
  const taken: string[] = [];
  for (let i = 0; i < count; i++) {
    const { value } = (await iterator.next()) as IteratorYieldResult<SubscriptionMessage>;
    taken.push(
      value.kind === 'event'
        ? `ev:${value.event.position.commit}`
        : value.kind === 'checkpoint'
          ? `cp:${value.position.commit}`
          : 'caught-up',
    );
  }
  return taken;
}

describe('EsdbSubscription', () => {
  it('puts caught-up after the events the client still had buffered when it announced it', async () => {
    const { client, nextOpened } = fakeClient();
    const subscription = subscribe(client);
    const { stream } = await nextOpened(1);

    // Buffered before anyone reads them, then caught-up announced out of band.
    for (const commit of [1, 2, 3]) stream.push(resolved(commit));
    stream.emit('caughtUp');
    const iterator = subscription[Symbol.asyncIterator]();

    expect(await take(iterator, 4)).toEqual(['ev:1', 'ev:2', 'ev:3', 'caught-up']);
    await subscription.close();
  });

  it('passes a checkpoint on only after the events the client still had buffered when it announced it', async () => {
    const { client, nextOpened } = fakeClient();
    const subscription = new EsdbSubscription(
      client,
      undefined,
      { initialDelayMs: 1, maxDelayMs: 5 },
      () => undefined,
      ['UnitTested.v1'],
    );
    const { options, stream } = await nextOpened(1);
    const checkpointReached = (options.filter as { checkpointReached: CheckpointReached }).checkpointReached;
    stream.pause();
    for (const commit of [1, 2, 3]) stream.push(resolved(commit));
    await checkpointReached(stream, position(40));
    stream.push(resolved(41));
    stream.resume();
    const iterator = subscription[Symbol.asyncIterator]();

    expect(await take(iterator, 5)).toEqual(['ev:1', 'ev:2', 'ev:3', 'cp:40', 'ev:41']);
    await subscription.close();
  });

  it('ignores and reports checkpoints at or above 2^63 or beyond the end of the log; events still come', async () => {
    const { client, opened, nextOpened } = fakeClient(500);
    const ignored: string[] = [];
    const subscription = new EsdbSubscription(
      client,
      undefined,
      {
        initialDelayMs: 1,
        maxDelayMs: 5,
        onCheckpointIgnored: (p, reason) => ignored.push(`${p.commit}: ${reason}`),
      },
      () => undefined,
      ['UnitTested.v1'],
    );
    const first = await nextOpened(1);
    const checkpointReached = (first.options.filter as { checkpointReached: CheckpointReached })
      .checkpointReached;
    await checkpointReached(first.stream, position(2n ** 64n - 1n));
    await checkpointReached(first.stream, position(600));
    await checkpointReached(first.stream, position(400));
    first.stream.push(resolved(450));
    const iterator = subscription[Symbol.asyncIterator]();
    expect(await take(iterator, 2)).toEqual(['cp:400', 'ev:450']);

    // After a drop it resumes from the last event, not from a checkpoint it ignored.
    first.stream.emit('error', new Error('connection reset'));
    await nextOpened(2);
    expect(opened[1].options.fromPosition).toEqual(position(450));
    expect(ignored).toEqual([
      `${2n ** 64n - 1n}: at or above 2^63`,
      '600: beyond the end of the log (a log ending at 500)',
    ]);
    await subscription.close();
  });

  it('holds a checkpoint at the end of the log until the server has read past it', async () => {
    // An unfixed server's end-of-log checkpoint, made to look valid by an append at that position.
    const { client, nextOpened } = fakeClient(500);
    const subscription = new EsdbSubscription(
      client,
      position(100),
      { initialDelayMs: 1, maxDelayMs: 5 },
      () => undefined,
      ['UnitTested.v1'],
    );
    const { options, stream } = await nextOpened(1);
    const checkpointReached = (options.filter as { checkpointReached: CheckpointReached }).checkpointReached;
    await checkpointReached(stream, position(500));
    stream.push(resolved(500));
    stream.push(resolved(600));
    const iterator = subscription[Symbol.asyncIterator]();

    // Never a checkpoint at 500 before the event at 500: a consumer that stored it would skip it.
    expect(await take(iterator, 2)).toEqual(['ev:500', 'ev:600']);
    await subscription.close();
  });

  it('resubscribes from the last event taken in, skips anything at or before it, and catches up once', async () => {
    const { client, nextOpened } = fakeClient();
    const drops: number[] = [];
    const subscription = new EsdbSubscription(
      client,
      position(10),
      { initialDelayMs: 1, maxDelayMs: 5, onDropped: (_, attempt) => drops.push(attempt) },
      () => undefined,
    );
    const iterator = subscription[Symbol.asyncIterator]();
    const first = await nextOpened(1);
    first.stream.push(resolved(11));
    first.stream.push(resolved(12));
    first.stream.emit('caughtUp');
    expect(await take(iterator, 3)).toEqual(['ev:11', 'ev:12', 'caught-up']);

    first.stream.emit('error', new Error('connection reset'));
    const second = await nextOpened(2);
    // A server that repeated its start position would not cause a duplicate.
    second.stream.push(resolved(12));
    second.stream.push(resolved(13));
    second.stream.emit('caughtUp');
    second.stream.push(resolved(14));

    expect(await take(iterator, 2)).toEqual(['ev:13', 'ev:14']);
    expect(first.options.fromPosition).toEqual(position(10));
    expect(second.options.fromPosition).toEqual(position(12));
    expect(first.stream.unsubscribed).toBe(true);
    expect(drops).toEqual([1]);
    await subscription.close();
    expect(second.stream.unsubscribed).toBe(true);
  });

  it('resubscribes when the server ends the call, and keeps trying with growing delays', async () => {
    const { client, nextOpened } = fakeClient();
    const delays: number[] = [];
    const subscription = new EsdbSubscription(
      client,
      undefined,
      { initialDelayMs: 2, maxDelayMs: 8, onDropped: (_, __, delayMs) => delays.push(delayMs) },
      () => undefined,
    );
    for (let attempt = 1; attempt <= 4; attempt++) {
      const { stream } = await nextOpened(attempt);
      stream.push(null);
      stream.resume();
    }
    await nextOpened(5);
    await subscription.close();

    expect(delays).toHaveLength(4);
    delays.forEach((delay, i) => {
      const ceiling = Math.min(8, 2 * 2 ** i);
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    });
  });

  it('drops system events and streams the server filter let through', async () => {
    const { client, nextOpened } = fakeClient();
    const subscription = subscribe(client);
    const { stream } = await nextOpened(1);
    stream.push(resolved(1, '$$unit-1', 'UnitTested.v1'));
    stream.push(resolved(2, 'unit-1', '$metadata'));
    stream.push(resolved(3));
    const iterator = subscription[Symbol.asyncIterator]();

    expect(await take(iterator, 1)).toEqual(['ev:3']);
    await subscription.close();
  });

  it('ends the iteration on close and pauses the server stream while the consumer lags', async () => {
    const { client, nextOpened } = fakeClient();
    const subscription = subscribe(client);
    const { stream } = await nextOpened(1);
    for (let commit = 1; commit <= 300; commit++) stream.push(resolved(commit));
    await new Promise((resolve) => setImmediate(resolve));

    expect(stream.isPaused()).toBe(true);
    const iterator = subscription[Symbol.asyncIterator]();
    await take(iterator, 200);
    expect(stream.isPaused()).toBe(false);
    await subscription.close();
    await expect(iterator.next()).resolves.toEqual({ value: undefined, done: true });
  });
});

describe('retryDelay', () => {
  it('doubles from the initial delay up to the maximum, with jitter in the upper half', () => {
    for (let attempt = 1; attempt <= 40; attempt++) {
      const ceiling = Math.min(1000, 50 * 2 ** (attempt - 1));
      const delay = retryDelay(attempt, { initialDelayMs: 50, maxDelayMs: 1000 });
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });
});
