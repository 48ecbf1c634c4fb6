import { randomUUID } from 'node:crypto';
import {
  AppendResult,
  ChainLink,
  LinkedChainLink,
  LogPage,
  CheckpointBeyondHeadError,
  EventStore,
  EventSubscription,
  ExpectedRevision,
  NewEvent,
  position,
  Position,
  ReadAllOptions,
  RecordedEvent,
  SubscriptionMessage,
  WrongExpectedRevisionError,
  comparePositions,
  SqliteCheckpointStore,
} from '@chronicle/event-store';
import { MemoryReadStore } from './memory/memory-read-store';
import { ProjectionProcessor, ProjectionProcessorOptions } from './projection-processor';
import { ALL_PROJECTIONS } from './projections/all-projections';
import { Projection } from './projections/projection';
import { Checkpoint, DocumentChange } from './read-store.port';
import { reaches } from './projection-processor.spec-helper';

/**
 * An in-memory EventStore that follows the port: positions 1, 2, 3, ...; subscriptions deliver
 * the history after `after` (exclusive), then caught-up, then live events until closed.
 */
class FakeEventStore extends EventStore {
  readonly events: RecordedEvent[] = [];
  /** The `after` of every subscription opened, in order. */
  readonly subscribedAfter: (Position | undefined)[] = [];
  private readonly open = new Set<{ fail(error: Error): void; end(): void; wake(): void }>();
  private readonly lastRevisions = new Map<string, number>();

  append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const current = this.lastRevisions.get(stream) ?? -1;
    const actual = current < 0 ? 'no_stream' : current;
    const ok =
      expected === 'any' ||
      (expected === 'no_stream' && actual === 'no_stream') ||
      (expected === 'stream_exists' && actual !== 'no_stream') ||
      expected === actual;
    if (!ok) return Promise.reject(new WrongExpectedRevisionError(stream, expected, actual));
    let revision = current;
    for (const event of events) {
      revision++;
      this.events.push({
        ...event,
        stream,
        revision,
        position: position(this.events.length + 1),
        recordedAt: new Date().toISOString(),
        hash: 'a'.repeat(64),
      });
    }
    this.lastRevisions.set(stream, revision);
    for (const subscription of this.open) subscription.wake();
    return Promise.resolve({ nextExpectedRevision: revision, position: position(this.events.length) });
  }

  readStream(stream: string, options?: { fromRevision?: number }): Promise<RecordedEvent[]> {
    const from = options?.fromRevision ?? 0;
    return Promise.resolve(this.events.filter((event) => event.stream === stream && event.revision >= from));
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    const after = options.after;
    const events = this.events.filter(
      (event) => after === undefined || comparePositions(event.position, after) > 0,
    );
    yield* events.slice(0, options.limit ?? events.length);
  }

  subscribeToAll(options: { after?: Position } = {}): EventSubscription {
    this.subscribedAfter.push(options.after);
    const events = this.events;
    const after = options.after;
    let index =
      after === undefined ? 0 : events.filter((event) => comparePositions(event.position, after) <= 0).length;
    let closed = false;
    let failure: Error | null = null;
    let wakeUp: (() => void) | null = null;
    const control = {
      fail: (error: Error) => {
        failure = error;
        control.wake();
      },
      end: () => {
        closed = true;
        control.wake();
      },
      wake: () => {
        wakeUp?.();
        wakeUp = null;
      },
    };
    this.open.add(control);
    const open = this.open;
    async function* messages(): AsyncGenerator<SubscriptionMessage> {
      let caughtUp = false;
      try {
        while (!closed) {
          if (failure) throw failure;
          if (index < events.length) {
            yield { kind: 'event', event: events[index++] };
          } else if (!caughtUp) {
            caughtUp = true;
            yield { kind: 'caught-up' };
          } else {
            await new Promise<void>((resolve) => (wakeUp = resolve));
          }
        }
      } finally {
        open.delete(control);
      }
    }
    const iterator = messages();
    return {
      [Symbol.asyncIterator]: () => iterator,
      close: () => {
        control.end();
        return Promise.resolve();
      },
    };
  }

  readonly chainScope = 'log' as const;

  /** Projections never query the log as the audit does: a call would be a fault of the processor. */
  queryLog(): Promise<LogPage> {
    throw new Error('The projection processor must not query the log');
  }

  /** Projections never read the chain: a call would be a fault of the processor. */
  readChain(): AsyncIterable<ChainLink> {
    throw new Error('The projection processor must not read the hash chain');
  }

  readChainLinks(): Promise<LinkedChainLink[]> {
    throw new Error('The projection processor must not read the hash chain');
  }

  headPosition(): Promise<Position | null> {
    return Promise.resolve(this.events.length === 0 ? null : position(this.events.length));
  }

  ping(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    for (const subscription of this.open) subscription.end();
    return Promise.resolve();
  }

  /** Every open subscription fails, as when the connection to a server is lost. */
  dropSubscriptions(error: Error): void {
    for (const subscription of this.open) subscription.fail(error);
  }

  /** Every open subscription ends as if the server had closed it. */
  endSubscriptions(): void {
    for (const subscription of this.open) subscription.end();
  }

  get openSubscriptions(): number {
    return this.open.size;
  }
}

/** A MemoryReadStore that records every batch and can be told to fail. */
class RecordingReadStore extends MemoryReadStore {
  readonly batches: { changes: DocumentChange[]; checkpoint: Checkpoint }[] = [];
  failuresLeft = 0;

  override applyBatch(changes: DocumentChange[], checkpoint: Checkpoint): Promise<void> {
    if (this.failuresLeft > 0) {
      this.failuresLeft--;
      return Promise.reject(new Error('read store unavailable'));
    }
    this.batches.push({ changes, checkpoint });
    return super.applyBatch(changes, checkpoint);
  }

  /** Positions of every change received, in order. */
  changePositions(): bigint[] {
    return this.batches.flatMap((batch) => batch.changes.map((change) => change.position.commit));
  }
}

const metadata = {
  actor: 'system',
  correlationId: 'test',
  causationId: null,
  occurredAt: '2026-01-01T00:00:00.000Z',
};

function registerCustomer(store: FakeEventStore, id: number): Promise<AppendResult> {
  const data = {
    customerId: id,
    name: `Customer ${id}`,
    email: `c${id}@example.com`,
    createdon: '2026-01-01T00:00:00.000Z',
  };
  return store.append(
    `customer-${id}`,
    [{ id: randomUUID(), type: 'CustomerRegistered.v1', data, metadata }],
    'no_stream',
  );
}

function registerUser(store: FakeEventStore, userId: string, age = 30): Promise<AppendResult> {
  const data = { userId, accountId: null, name: 'Ada', age, createdon: '2026-01-02T00:00:00.000Z' };
  return store.append(
    `user-${userId}`,
    [{ id: randomUUID(), type: 'UserRegistered.v2', data, metadata }],
    'no_stream',
  );
}

/** An event no projection handles. */
function openAccount(store: FakeEventStore): Promise<AppendResult> {
  const accountId = randomUUID();
  const data = {
    accountId,
    email: `${accountId}@example.com`,
    userId: randomUUID(),
    roles: [],
    passwordHash: 'x',
    openedAt: '',
  };
  return store.append(
    `account-${accountId}`,
    [{ id: randomUUID(), type: 'AccountOpened.v1', data, metadata }],
    'no_stream',
  );
}

/** Polls until `condition` holds: a generous ceiling, not a time the test expects. */
async function waitUntil(condition: () => boolean): Promise<void> {
  for (let attempt = 0; !condition(); attempt++) {
    if (attempt === 1_000) throw new Error('the condition did not hold within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function customerIds(store: MemoryReadStore): Promise<number[]> {
  return (await store.listCustomers({ offset: 0, limit: 100_000 })).items.map((customer) => customer.id);
}

describe('ProjectionProcessor', () => {
  let events: FakeEventStore;
  let readStore: RecordingReadStore;
  let logger: { log: jest.Mock; warn: jest.Mock; error: jest.Mock };
  const runners: ProjectionProcessor[] = [];
  let parking: SqliteCheckpointStore;

  beforeEach(() => {
    events = new FakeEventStore();
    readStore = new RecordingReadStore();
    logger = { log: jest.fn(), warn: jest.fn(), error: jest.fn() };
    parking = SqliteCheckpointStore.open(':memory:');
  });

  afterEach(async () => {
    await Promise.all(runners.splice(0).map((runner) => runner.stop()));
  });

  function runner(
    options: Partial<ProjectionProcessorOptions> = {},
    projections: readonly Projection[] = ALL_PROJECTIONS,
  ): ProjectionProcessor {
    const created = new ProjectionProcessor(events, readStore, projections, {
      checkpointName: 'read-models',
      parking,
      logger,
      retryDelayMs: 5,
      maxRetryDelayMs: 20,
      ...options,
    });
    runners.push(created);
    return created;
  }

  it("checkpoints at a filtered subscription's checkpoint messages, past the events it skipped", async () => {
    await registerCustomer(events, 1);
    const [registered] = events.events;
    let close: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (close = resolve));
    jest.spyOn(events, 'subscribeToAll').mockImplementation(() => {
      async function* messages(): AsyncGenerator<SubscriptionMessage> {
        yield { kind: 'event', event: registered };
        yield { kind: 'checkpoint', position: position(7) };
        yield { kind: 'caught-up' };
        yield { kind: 'checkpoint', position: position(9) };
        await closed;
      }
      const iterator = messages();
      return { [Symbol.asyncIterator]: () => iterator, close: () => Promise.resolve(close()) };
    });
    const subject = runner();

    await subject.start();

    expect(await customerIds(readStore)).toEqual([1]);
    expect(await reaches(subject, position(9), 1000)).toBe(true);
    expect(await readStore.getCheckpoint('read-models')).toEqual(position(9));
  });

  it('applies an event that comes after a checkpoint beyond it: a checkpoint never suppresses an event', async () => {
    await registerCustomer(events, 1);
    const [registered] = events.events;
    let close: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (close = resolve));
    jest.spyOn(events, 'subscribeToAll').mockImplementation(() => {
      async function* messages(): AsyncGenerator<SubscriptionMessage> {
        // What a server at the end of its log sent (KurrentDB PR 4975), then the event written there.
        yield { kind: 'checkpoint', position: position(5) };
        yield { kind: 'event', event: { ...registered, position: position(5) } };
        yield { kind: 'caught-up' };
        await closed;
      }
      const iterator = messages();
      return { [Symbol.asyncIterator]: () => iterator, close: () => Promise.resolve(close()) };
    });
    const subject = runner();

    await subject.start();

    expect(await customerIds(readStore)).toEqual([1]);
    expect(await readStore.getCheckpoint('read-models')).toEqual(position(5));
  });

  it('applies the history before start() resolves, then follows live events', async () => {
    await registerCustomer(events, 2);
    await registerUser(events, 'u-1');
    await openAccount(events);
    await registerCustomer(events, 1);
    const subject = runner();

    await subject.start();

    expect(subject.isCaughtUp).toBe(true);
    expect(await customerIds(readStore)).toEqual([1, 2]);
    expect((await readStore.getUser('u-1'))?.name).toBe('Ada');
    expect(subject.position).toEqual(position(4));
    expect(await readStore.getCheckpoint('read-models')).toEqual(position(4));

    const live = await registerCustomer(events, 3);
    expect(await reaches(subject, live.position, 1000)).toBe(true);
    expect(await customerIds(readStore)).toEqual([1, 2, 3]);
    expect(await readStore.getCheckpoint('read-models')).toEqual(position(5));
  });

  it('resolves start() on an empty store and applies what comes later', async () => {
    const subject = runner();
    await subject.start();
    expect(subject.position).toBeNull();

    const live = await registerUser(events, 'u-1', 41);

    expect(await reaches(subject, live.position, 1000)).toBe(true);
    expect((await readStore.getUser('u-1'))?.age).toBe(41);
  });

  it('advances the checkpoint through events that change no document', async () => {
    await openAccount(events);
    await openAccount(events);
    const subject = runner();

    await subject.start();

    expect(readStore.batches).toEqual([
      { changes: [], checkpoint: { projection: 'read-models', position: position(2) } },
    ]);
    const live = await openAccount(events);
    expect(await reaches(subject, live.position, 1000)).toBe(true);
    expect(await readStore.getCheckpoint('read-models')).toEqual(position(3));
  });

  it('resumes after a restart from its checkpoint: no event applied twice, none lost', async () => {
    for (let id = 1; id <= 3; id++) await registerCustomer(events, id);
    const first = runner();
    await first.start();
    const live = await registerCustomer(events, 4);
    await reaches(first, live.position, 1000);
    await first.stop();

    await registerCustomer(events, 5);
    await registerUser(events, 'u-1');
    await openAccount(events);
    const second = runner();
    await second.start();

    expect(events.subscribedAfter.at(-1)).toEqual(position(4));
    expect(readStore.changePositions()).toEqual([1n, 2n, 3n, 4n, 5n, 6n]);
    expect(await customerIds(readStore)).toEqual([1, 2, 3, 4, 5]);
    expect(second.position).toEqual(position(7));
    await second.stop();

    const batchesBefore = readStore.batches.length;
    const third = runner();
    await third.start();
    expect(readStore.batches.length).toBe(batchesBefore);
    expect(third.position).toEqual(position(7));
  });

  it('gathers the history into few batches', async () => {
    for (let id = 1; id <= 5_000; id++) await registerCustomer(events, id);
    const subject = runner({ batchSize: 1000 });

    await subject.start();

    expect(readStore.batches.map((batch) => batch.changes.length)).toEqual([1000, 1000, 1000, 1000, 1000]);
    expect(readStore.batches.map((batch) => batch.checkpoint.position.commit)).toEqual([
      1000n,
      2000n,
      3000n,
      4000n,
      5000n,
    ]);
    expect((await customerIds(readStore)).length).toBe(5_000);
  });

  it('applies live events that arrive together as one batch', async () => {
    const subject = runner();
    await subject.start();

    const appends = Array.from({ length: 200 }, (_, i) => registerCustomer(events, i + 1));
    const last = (await Promise.all(appends)).at(-1)!;

    expect(await reaches(subject, last.position, 1000)).toBe(true);
    expect(readStore.batches.length).toBe(1);
    expect(readStore.batches[0].changes.length).toBe(200);
  });

  it('retries a failing batch with back-off, logging each failure, and loses nothing', async () => {
    for (let id = 1; id <= 10; id++) await registerCustomer(events, id);
    readStore.failuresLeft = 3;
    const subject = runner();

    await subject.start();

    expect(logger.error).toHaveBeenCalledTimes(3);
    expect(logger.error.mock.calls[0][0]).toMatch(/read store unavailable; retrying in 5 ms/);
    expect(logger.error.mock.calls[1][0]).toMatch(/retrying in 10 ms/);
    expect(logger.error.mock.calls[2][0]).toMatch(/retrying in 20 ms/);
    expect(readStore.changePositions()).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i + 1)));
    expect(await customerIds(readStore)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

    readStore.failuresLeft = 1;
    const live = await registerCustomer(events, 11);
    expect(await reaches(subject, live.position, 1000)).toBe(true);
    expect(logger.error).toHaveBeenCalledTimes(4);
    expect(logger.error.mock.calls[3][0]).toMatch(
      /Committing at 11 failed: read store unavailable; retrying in 5 ms/,
    );
  });

  it('retries when reading the checkpoint fails at start', async () => {
    await registerCustomer(events, 1);
    const getCheckpoint = jest
      .spyOn(readStore, 'getCheckpoint')
      .mockRejectedValueOnce(new Error('not reachable'))
      .mockRejectedValueOnce(new Error('not reachable'));
    const subject = runner();

    await subject.start();

    expect(getCheckpoint).toHaveBeenCalledTimes(3);
    expect(logger.error).toHaveBeenCalledTimes(2);
    expect(await customerIds(readStore)).toEqual([1]);
  });

  it('stops at start, pointing at projections rebuild, when its checkpoint lies beyond the log', async () => {
    await registerCustomer(events, 1);
    await readStore.applyBatch([], { projection: 'read-models', position: position(9) });
    const subject = runner();

    await expect(subject.start()).rejects.toBeInstanceOf(CheckpointBeyondHeadError);

    expect(logger.error).toHaveBeenCalledTimes(1);
    expect(logger.error.mock.calls[0][0]).toMatch(
      /\(9\) lies beyond the end of the event log \(head 1\).*projections rebuild/,
    );
    expect(events.subscribedAfter).toEqual([]);
    expect(await customerIds(readStore)).toEqual([]);
  });

  it('takes a stored checkpoint no log can hold (the 24.x server bug) as absent, and says so', async () => {
    await registerCustomer(events, 1);
    await readStore.applyBatch([], { projection: 'read-models', position: position(2n ** 64n - 1n) });
    const subject = runner();

    await subject.start();

    expect(await customerIds(readStore)).toEqual([1]);
    expect(events.subscribedAfter).toEqual([undefined]);
    expect(logger.warn.mock.calls[0][0]).toMatch(/names no position of any log \(at or above 2\^63\)/);
  });

  it('parks an event a projection fails on, naming it with the reason, and applies the others', async () => {
    await registerCustomer(events, 1);
    await registerCustomer(events, 2);
    const broken: Projection = {
      name: 'broken',
      collection: 'customers',
      eventTypes: ['CustomerRegistered.v1'],
      project: (event) => {
        if (event.stream === 'customer-1') throw new Error('boom');
        return ALL_PROJECTIONS.flatMap((projection) => projection.project(event));
      },
    };
    const subject = runner({}, [broken]);

    await subject.start();

    expect(logger.error.mock.calls[0][0]).toMatch(
      /Parking CustomerRegistered.v1 .* after 1 attempt\(s\): Projection broken failed on CustomerRegistered.v1 at 1 in customer-1: boom/,
    );
    expect(await customerIds(readStore)).toEqual([2]);
    expect(await parking.parked('read-models')).toEqual([
      expect.objectContaining({ stream: 'customer-1', position: position(1), attempts: 1 }),
    ]);
    expect(await readStore.getCheckpoint('read-models')).toEqual(position(2));
  });

  it('reopens a dropped subscription from the last applied position', async () => {
    await registerCustomer(events, 1);
    await registerCustomer(events, 2);
    const subject = runner();
    await subject.start();

    events.dropSubscriptions(new Error('connection lost'));
    const live = await registerCustomer(events, 3);

    expect(await reaches(subject, live.position, 1000)).toBe(true);
    expect(logger.error.mock.calls[0][0]).toMatch(/connection lost/);
    expect(events.subscribedAfter).toEqual([undefined, position(2)]);
    expect(readStore.changePositions()).toEqual([1n, 2n, 3n]);
  });

  it('reopens a subscription that ends without being closed', async () => {
    const subject = runner();
    await subject.start();

    events.endSubscriptions();
    const live = await registerCustomer(events, 1);

    expect(await reaches(subject, live.position, 1000)).toBe(true);
    expect(logger.warn.mock.calls[0][0]).toMatch(/Subscription ended unexpectedly/);
    expect(events.subscribedAfter.length).toBe(2);
  });

  it('stops: closes its subscription, applies nothing more, and stop() can be repeated', async () => {
    const subject = runner();
    await subject.start();

    await subject.stop();
    await subject.stop();
    // No subscription is left to bring the next event: nothing can apply it, however long one waits.
    expect(events.openSubscriptions).toBe(0);
    await registerCustomer(events, 1);

    expect(events.openSubscriptions).toBe(0);
    expect(readStore.batches).toEqual([]);
    expect(() => subject.start()).toThrow('starts once');
  });

  it('rejects start() when stopped before catching up', async () => {
    await registerCustomer(events, 1);
    readStore.failuresLeft = Number.POSITIVE_INFINITY;
    const subject = runner();
    const started = subject.start();
    await waitUntil(() => logger.error.mock.calls.length > 0);

    await subject.stop();

    await expect(started).rejects.toThrow('stopped before catching up');
    expect(logger.error.mock.calls[0][0]).toMatch(/read store unavailable; retrying in 5 ms/);
  });
});
