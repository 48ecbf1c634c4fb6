import type {
  AllStreamResolvedEvent,
  EventStoreDBClient,
  SubscribeToAllOptions,
} from '@eventstore/db-client';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { SubscriptionMessage } from '../event-store.port';
import { within } from '../../../../test/contract/support/events';
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

/** Every wait of this spec: the fake answers in microseconds, so a wait this long is a failure. */
const WAIT_MS = 2_000;

/**
 * A client whose log ends at `end.at` (null: an empty log; 'unreadable': its read fails), and that
 * counts the reads of where it ends.
 */
function fakeClient(logEnd: number | null | 'unreadable' = 1_000) {
  const opened: { options: SubscribeToAllOptions; stream: FakeServerSubscription }[] = [];
  const waiters: (() => void)[] = [];
  const end = { at: logEnd, reads: 0 };
  const client = {
    // The backwards read of one record that tells where the log ends.
    readAll: async function* () {
      end.reads++;
      await Promise.resolve();
      if (end.at === 'unreadable') throw new Error('connection reset');
      if (end.at !== null) yield resolved(end.at, '$stats-node', '$statsCollected');
    },
    subscribeToAll(options: SubscribeToAllOptions) {
      const stream = new FakeServerSubscription();
      opened.push({ options, stream });
      waiters.splice(0).forEach((wake) => wake());
      return stream;
    },
  } as unknown as EventStoreDBClient;
  const nextOpened = (count: number) =>
    within(
      (async () => {
        while (opened.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
        return opened[count - 1];
      })(),
      WAIT_MS,
      `server subscription #${count}`,
    );
  return { client, opened, nextOpened, end };
}

/** The filter's checkpoint callback the subscription gave the client (type-filtered subscriptions only). */
function checkpointsOf(options: SubscribeToAllOptions): CheckpointReached {
  return (options.filter as { checkpointReached: CheckpointReached }).checkpointReached;
}

function closeWithin(subscription: EsdbSubscription): Promise<void> {
  return within(subscription.close(), WAIT_MS, 'end of the close');
}

function subscribe(client: EventStoreDBClient, after?: Position) {
  return new EsdbSubscription(client, after, { initialDelayMs: 1, maxDelayMs: 5 }, () => undefined);
}

/** Filtered by type, as the server then sends checkpoints; the ignored ones are reported to `ignored`. */
function filtered(client: EventStoreDBClient, after?: Position, ignored: string[] = []) {
  return new EsdbSubscription(
    client,
    after,
    {
      initialDelayMs: 1,
      maxDelayMs: 5,
      onCheckpointIgnored: (p, reason) => ignored.push(`${p.commit}: ${reason}`),
    },
    () => undefined,
    ['UnitTested.v1'],
  );
}

async function take(iterator: AsyncIterator<SubscriptionMessage>, count: number): Promise<string[]> {
  const taken: string[] = [];
  for (let i = 0; i < count; i++) {
    const { value } = (await within(
      iterator.next(),
      WAIT_MS,
      `message ${i + 1} of ${count} (after ${JSON.stringify(taken)})`,
    )) as IteratorYieldResult<SubscriptionMessage>;
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
    await closeWithin(subscription);
  });

  it('passes a checkpoint on only after the events the client still had buffered when it announced it', async () => {
    const { client, nextOpened } = fakeClient();
    const subscription = filtered(client);
    const { options, stream } = await nextOpened(1);
    const checkpointReached = checkpointsOf(options);
    stream.pause();
    for (const commit of [1, 2, 3]) stream.push(resolved(commit));
    await checkpointReached(stream, position(40));
    stream.push(resolved(41));
    stream.resume();
    const iterator = subscription[Symbol.asyncIterator]();

    expect(await take(iterator, 5)).toEqual(['ev:1', 'ev:2', 'ev:3', 'cp:40', 'ev:41']);
    await closeWithin(subscription);
  });

  it('ignores and reports checkpoints at or above 2^63 or beyond the end of the log; events still come', async () => {
    const { client, opened, nextOpened } = fakeClient(500);
    const ignored: string[] = [];
    const subscription = filtered(client, undefined, ignored);
    const first = await nextOpened(1);
    const checkpointReached = checkpointsOf(first.options);
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
    await closeWithin(subscription);
  });

  it('holds a checkpoint at the end of the log until the server has read past it', async () => {
    // An unfixed server's end-of-log checkpoint, made to look valid by an append at that position.
    const { client, nextOpened } = fakeClient(500);
    const subscription = filtered(client, position(100));
    const { options, stream } = await nextOpened(1);
    const checkpointReached = checkpointsOf(options);
    await checkpointReached(stream, position(500));
    stream.push(resolved(500));
    stream.push(resolved(600));
    const iterator = subscription[Symbol.asyncIterator]();

    // Never a checkpoint at 500 before the event at 500: a consumer that stored it would skip it.
    expect(await take(iterator, 2)).toEqual(['ev:500', 'ev:600']);
    await closeWithin(subscription);
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
    await closeWithin(subscription);
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
    await closeWithin(subscription);

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
    await closeWithin(subscription);
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
    await closeWithin(subscription);
    await expect(iterator.next()).resolves.toEqual({ value: undefined, done: true });
  });
});

describe('EsdbSubscription, checkpoints', () => {
  it('never passes an end-of-log checkpoint the server repeats before the event at its position', async () => {
    const { client, nextOpened, end } = fakeClient(500);
    const subscription = filtered(client, position(100));
    const { options, stream } = await nextOpened(1);
    await checkpointsOf(options)(stream, position(500));
    // The same end-of-log checkpoint again, the log unchanged: at the end it knows, not read again.
    await checkpointsOf(options)(stream, position(500));
    expect(end.reads).toBe(1);
    stream.push(resolved(500));
    stream.push(resolved(600));
    const iterator = subscription[Symbol.asyncIterator]();

    // Then dropped, as at or before the event at 500 that came after it.
    expect(await take(iterator, 2)).toEqual(['ev:500', 'ev:600']);
    await closeWithin(subscription);
  });

  it('holds a checkpoint the log has grown past, as the event at its position may still come', async () => {
    // Sent at the end of the log, at 500; an append at 700 came before the read of the end.
    const { client, nextOpened } = fakeClient(700);
    const subscription = filtered(client, position(100));
    const { options, stream } = await nextOpened(1);
    await checkpointsOf(options)(stream, position(500));
    stream.push(resolved(500));
    stream.push(resolved(700));
    const iterator = subscription[Symbol.asyncIterator]();

    expect(await take(iterator, 2)).toEqual(['ev:500', 'ev:700']);
    await closeWithin(subscription);
  });

  it('keeps holding an end-of-log checkpoint the server repeats after the log grew', async () => {
    const { client, nextOpened, end } = fakeClient(500);
    const ignored: string[] = [];
    const subscription = filtered(client, position(100), ignored);
    const { options, stream } = await nextOpened(1);
    const checkpoint = checkpointsOf(options);
    await checkpoint(stream, position(500));
    end.at = 700;
    // A wrong checkpoint beyond the end teaches the new end; the repeat is then before it.
    await checkpoint(stream, position(800));
    await checkpoint(stream, position(500));
    await checkpoint(stream, position(400));
    stream.push(resolved(500));
    stream.push(resolved(600));
    const iterator = subscription[Symbol.asyncIterator]();

    expect(await take(iterator, 2)).toEqual(['ev:500', 'ev:600']);
    expect(ignored).toEqual(['800: beyond the end of the log (a log ending at 700)']);
    await closeWithin(subscription);
  });

  it('passes a held checkpoint on once an event beyond it shows the server read past it', async () => {
    const { client, nextOpened } = fakeClient(500);
    const subscription = filtered(client, position(100));
    const { options, stream } = await nextOpened(1);
    await checkpointsOf(options)(stream, position(500));
    stream.push(resolved(600));
    const iterator = subscription[Symbol.asyncIterator]();

    expect(await take(iterator, 2)).toEqual(['cp:500', 'ev:600']);
    await closeWithin(subscription);
  });

  it('passes a held checkpoint on once a later checkpoint shows the server read past it', async () => {
    const { client, nextOpened, end } = fakeClient(500);
    const subscription = filtered(client, position(100));
    const { options, stream } = await nextOpened(1);
    await checkpointsOf(options)(stream, position(500));
    end.at = 700;
    await checkpointsOf(options)(stream, position(650));
    stream.push(resolved(700));
    const iterator = subscription[Symbol.asyncIterator]();

    expect(await take(iterator, 3)).toEqual(['cp:500', 'cp:650', 'ev:700']);
    await closeWithin(subscription);
  });

  it('reads where the log ends only for a checkpoint beyond the end it knows and the last event', async () => {
    const { client, nextOpened, end } = fakeClient(1_000);
    const subscription = filtered(client);
    const { options, stream } = await nextOpened(1);
    const iterator = subscription[Symbol.asyncIterator]();
    const checkpoint = checkpointsOf(options);

    // An event teaches that the log reaches at least that far.
    stream.push(resolved(450));
    expect(await take(iterator, 1)).toEqual(['ev:450']);
    await checkpoint(stream, position(450));
    await checkpoint(stream, position(440));
    expect(end.reads).toBe(0);
    await checkpoint(stream, position(460));
    expect(end.reads).toBe(1);
    stream.push(resolved(470));
    expect(await take(iterator, 2)).toEqual(['cp:460', 'ev:470']);

    // A read taught that the log ends at 1000: a later event below it does not unlearn that.
    await checkpoint(stream, position(800));
    await checkpoint(stream, position(1_000));
    expect(end.reads).toBe(1);
    expect(await take(iterator, 1)).toEqual(['cp:800']);
    // Nor does an event beyond it need a read for a checkpoint before that event.
    stream.push(resolved(1_100));
    expect(await take(iterator, 2)).toEqual(['cp:1000', 'ev:1100']);
    await checkpoint(stream, position(1_050));
    expect(end.reads).toBe(1);
    await closeWithin(subscription);
  });

  it('ignores a checkpoint it cannot check against the end of the log, silently, and one in an empty log, reported', async () => {
    const { client, nextOpened, end } = fakeClient('unreadable');
    const ignored: string[] = [];
    const subscription = filtered(client, undefined, ignored);
    const { options, stream } = await nextOpened(1);
    await checkpointsOf(options)(stream, position(40));
    end.at = null;
    await checkpointsOf(options)(stream, position(50));
    end.at = 1_000;
    await checkpointsOf(options)(stream, position(60));
    stream.push(resolved(70));
    const iterator = subscription[Symbol.asyncIterator]();

    expect(await take(iterator, 2)).toEqual(['cp:60', 'ev:70']);
    expect(ignored).toEqual(['50: beyond the end of the log (an empty log)']);
    expect(end.reads).toBe(3);
    await closeWithin(subscription);
  });

  it('resubscribes from the last checkpoint when it lies beyond the last event', async () => {
    const { client, opened, nextOpened } = fakeClient(1_000);
    const subscription = filtered(client);
    const first = await nextOpened(1);
    first.stream.push(resolved(5));
    await checkpointsOf(first.options)(first.stream, position(40));
    await checkpointsOf(first.options)(first.stream, position(50));
    const iterator = subscription[Symbol.asyncIterator]();
    expect(await take(iterator, 2)).toEqual(['ev:5', 'cp:40']);

    // Not from the one still held: the server has not shown it read past it.
    first.stream.emit('error', new Error('connection reset'));
    await nextOpened(2);
    expect(opened[1].options.fromPosition).toEqual(position(40));
    await closeWithin(subscription);
  });

  it('reports no checkpoint once closed', async () => {
    const { client, nextOpened } = fakeClient(500);
    const ignored: string[] = [];
    const subscription = filtered(client, undefined, ignored);
    const { options, stream } = await nextOpened(1);
    await closeWithin(subscription);
    await checkpointsOf(options)(stream, position(2n ** 64n - 1n));
    expect(ignored).toEqual([]);
  });
});

describe('EsdbSubscription, drops and close', () => {
  it('leaves an abandoned server stream unheard: its late events, caught-up and errors change nothing', async () => {
    const { client, nextOpened } = fakeClient();
    const subscription = subscribe(client);
    const iterator = subscription[Symbol.asyncIterator]();
    const first = await nextOpened(1);
    first.stream.emit('error', new Error('connection reset'));
    const second = await nextOpened(2);

    // Caught-up first: behind a late event, it would wait for that event to be taken.
    first.stream.emit('caughtUp');
    first.stream.push(resolved(50));
    first.stream.emit('error', new Error('late'));
    first.stream.emit('end');
    second.stream.push(resolved(13));
    second.stream.emit('caughtUp');

    expect(await take(iterator, 2)).toEqual(['ev:13', 'caught-up']);
    await closeWithin(subscription);
    expect(second.stream.unsubscribed).toBe(true);
  });

  it('starts the back-off again once a resubscription delivers, and tells why the server stream stopped', async () => {
    const { client, nextOpened } = fakeClient();
    const drops: string[] = [];
    const subscription = new EsdbSubscription(
      client,
      undefined,
      {
        initialDelayMs: 1,
        maxDelayMs: 5,
        onDropped: (error, attempt) => drops.push(`${attempt} ${error.name}: ${error.message}`),
      },
      () => undefined,
    );
    const iterator = subscription[Symbol.asyncIterator]();
    const first = await nextOpened(1);
    first.stream.push(null);
    first.stream.resume();
    const second = await nextOpened(2);
    second.stream.emit('error', new Error('connection reset'));
    const third = await nextOpened(3);
    third.stream.push(resolved(1));
    expect(await take(iterator, 1)).toEqual(['ev:1']);
    third.stream.emit('error', new Error('connection reset'));
    await nextOpened(4);

    expect(drops).toEqual([
      '1 SubscriptionEnded: The server ended the subscription',
      '2 Error: connection reset',
      '1 Error: connection reset',
    ]);
    await closeWithin(subscription);
  });

  it('fails the iteration when the server refuses the start position, and does not resubscribe', async () => {
    const { client, opened, nextOpened } = fakeClient();
    const subscription = subscribe(client, position(77));
    const iterator = subscription[Symbol.asyncIterator]();
    const { stream } = await nextOpened(1);
    stream.emit('error', Object.assign(new Error('invalid position'), { code: 3 }));

    await expect(within(iterator.next(), WAIT_MS, 'the failure')).rejects.toMatchObject({
      name: 'InvalidPositionError',
      message: 'Position 77 is not a position in the event log: no record starts there',
    });
    expect(opened).toHaveLength(1);
  });

  it('ends the back-off and opens no server subscription when closed during it, and tells its owner once', async () => {
    const { client, opened, nextOpened } = fakeClient();
    let told = 0;
    let dropped: () => void = () => undefined;
    const backingOff = new Promise<void>((resolve) => (dropped = resolve));
    const subscription = new EsdbSubscription(
      client,
      undefined,
      { initialDelayMs: 60_000, maxDelayMs: 60_000, onDropped: () => dropped() },
      () => told++,
    );
    const { stream } = await nextOpened(1);
    stream.emit('error', new Error('connection reset'));
    await within(backingOff, WAIT_MS, 'the drop');
    // The close ends a back-off of a minute at once.
    await closeWithin(subscription);
    await closeWithin(subscription);
    await new Promise((resolve) => setTimeout(resolve, 100));

    expect(opened).toHaveLength(1);
    expect(told).toBe(1);
  });

  it('pauses the server stream at 256 messages waiting, and resumes it below half of that', async () => {
    const { client, nextOpened } = fakeClient();
    const subscription = subscribe(client);
    const { stream } = await nextOpened(1);
    for (let commit = 1; commit <= 256; commit++) stream.push(resolved(commit));
    await new Promise((resolve) => setImmediate(resolve));
    expect(stream.isPaused()).toBe(true);

    const iterator = subscription[Symbol.asyncIterator]();
    await take(iterator, 128);
    expect(stream.isPaused()).toBe(true);
    await take(iterator, 1);
    expect(stream.isPaused()).toBe(false);
    await closeWithin(subscription);
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
