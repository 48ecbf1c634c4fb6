import { Logger } from '@nestjs/common';
import {
  AppendResult,
  CheckpointBeyondHeadError,
  EventStore,
  EventSubscription,
  LogPage,
  RecordedEvent,
  SubscribeOptions,
  SubscriptionMessage,
} from '../event-store.port';
import { SqliteCheckpointStore } from '../embedded/sqlite-checkpoint-store';
import type { ChainLink } from '../integrity/history-chain';
import type { LinkedChainLink } from '../event-store.port';
import { recordedEvent } from '../new-event.spec-helper';
import { formatPosition, Position, position } from '../position';
import { PermanentFailure, ProcessorHandler, ProcessorLogger, StoreReplacedError } from './event-processing';
import { EventProcessor, EventProcessorOptions } from './event-processor';

/**
 * The processor on its own, against a store whose subscriptions the test scripts message by
 * message, on a fake clock (timers and Date; promises and setImmediate stay real): a retry's
 * back-off, an idle commit's wait and the silence warning are reached by moving the clock, and
 * "nothing happened yet" holds because the processor then waits on a timer that has not fired.
 */

/** A subscription fed by the test: messages queued with push(), ended with end(). */
class ScriptedSubscription implements EventSubscription {
  private readonly queued: SubscriptionMessage[] = [];
  private readonly readers: Array<{
    resolve(result: IteratorResult<SubscriptionMessage>): void;
    reject(error: Error): void;
  }> = [];
  private ended = false;
  nextCalls = 0;
  closeCalls = 0;
  /** close() waits for it before it ends the iteration (a server slow to answer). */
  closeGate: Promise<void> = Promise.resolve();
  /** close() fails with it, after ending the iteration. */
  closeError: Error | null = null;
  /** close() fails the reads in flight instead of ending them (as a dropped channel does). */
  rejectReadsOnClose = false;

  constructor(readonly options: SubscribeOptions) {}

  push(...messages: SubscriptionMessage[]): void {
    for (const message of messages) {
      const reader = this.readers.shift();
      if (reader) reader.resolve({ done: false, value: message });
      else this.queued.push(message);
    }
  }

  end(): void {
    this.ended = true;
    for (const reader of this.readers.splice(0)) reader.resolve({ done: true, value: undefined });
  }

  async close(): Promise<void> {
    this.closeCalls++;
    await this.closeGate;
    this.ended = true;
    for (const reader of this.readers.splice(0)) {
      if (this.rejectReadsOnClose) reader.reject(new Error('subscription closed'));
      else reader.resolve({ done: true, value: undefined });
    }
    if (this.closeError) throw this.closeError;
  }

  [Symbol.asyncIterator](): AsyncIterator<SubscriptionMessage> {
    return {
      next: () => {
        this.nextCalls++;
        const message = this.queued.shift();
        if (message) return Promise.resolve({ done: false, value: message });
        if (this.ended) return Promise.resolve({ done: true, value: undefined });
        return new Promise((resolve, reject) => this.readers.push({ resolve, reject }));
      },
    };
  }
}

/** A store whose subscriptions are scripted: each new one is given the next of `scripts`. */
class ScriptedEventStore extends EventStore {
  readonly subscriptions: ScriptedSubscription[] = [];
  readonly scripts: SubscriptionMessage[][] = [];
  head: Position | null = position(9);
  pingAnswer: Error | null = null;
  pings = 0;

  append(): Promise<AppendResult> {
    return Promise.reject(new Error('not used'));
  }
  readStream(): Promise<RecordedEvent[]> {
    return Promise.resolve([]);
  }
  // eslint-disable-next-line require-yield
  async *readAll(): AsyncIterable<RecordedEvent> {
    return;
  }
  subscribeToAll(options: SubscribeOptions = {}): EventSubscription {
    const subscription = new ScriptedSubscription(options);
    subscription.push(...(this.scripts.shift() ?? []));
    this.subscriptions.push(subscription);
    return subscription;
  }
  headPosition(): Promise<Position | null> {
    return Promise.resolve(this.head);
  }
  readonly chainScope = 'log' as const;
  queryLog(): Promise<LogPage> {
    return Promise.resolve({ events: [], next: null });
  }
  // eslint-disable-next-line require-yield
  async *readChain(): AsyncIterable<ChainLink> {
    return;
  }
  readChainLinks(): Promise<LinkedChainLink[]> {
    return Promise.resolve([]);
  }
  ping(): Promise<void> {
    this.pings++;
    return this.pingAnswer === null ? Promise.resolve() : Promise.reject(this.pingAnswer);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Records what the processor feeds it; `onHandle` and `onCommit` make a call fail or wait. */
class RecordingHandler implements ProcessorHandler {
  readonly name = 'tested';
  eventTypes?: readonly string[];
  idleCommitMs?: number;
  /** What loadCheckpoint answers; a commit stores its position here, as a real handler does. */
  checkpoint: Position | null = null;
  /** loadCheckpoint fails with these first, one per call. */
  readonly loadFailures: Error[] = [];
  loads = 0;
  discards = 0;
  /** Positions handled, one entry per attempt. */
  readonly attempts: string[] = [];
  readonly commits: string[] = [];
  commitCalls = 0;
  onHandle?: (event: RecordedEvent, attempt: number) => Promise<void> | void;
  onCommit?: (upTo: Position, call: number) => Promise<void> | void;

  get handled(): string[] {
    return [...new Set(this.attempts)];
  }

  loadCheckpoint(): Promise<Position | null> {
    this.loads++;
    const failure = this.loadFailures.shift();
    return failure ? Promise.reject(failure) : Promise.resolve(this.checkpoint);
  }
  async handle(event: RecordedEvent): Promise<void> {
    const at = formatPosition(event.position);
    this.attempts.push(at);
    await this.onHandle?.(event, this.attempts.filter((a) => a === at).length);
  }
  async commit(upTo: Position): Promise<void> {
    this.commitCalls++;
    await this.onCommit?.(upTo, this.commitCalls);
    this.commits.push(formatPosition(upTo));
    this.checkpoint = upTo;
  }
  discard(): void {
    this.discards++;
  }
}

class RecordingLogger implements ProcessorLogger {
  readonly logs: string[] = [];
  readonly warnings: string[] = [];
  readonly errors: string[] = [];
  log(message: string): void {
    this.logs.push(message);
  }
  warn(message: string): void {
    this.warnings.push(message);
  }
  error(message: string): void {
    this.errors.push(message);
  }
}

function event(at: number | Position, type = 'Tested.v1'): SubscriptionMessage {
  const p = typeof at === 'number' ? position(at) : at;
  const where = { stream: 'stream-1', revision: Number(p.commit), position: p, hash: '' };
  return { kind: 'event', event: recordedEvent(type, { id: `e${formatPosition(p)}`, ...where }) };
}
const checkpoint = (at: number): SubscriptionMessage => ({ kind: 'checkpoint', position: position(at) });
const caughtUp: SubscriptionMessage = { kind: 'caught-up' };

/** Lets promises and setImmediate callbacks run, without moving the fake clock. */
async function settle(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Waits, without moving the clock, until `condition` holds; fails after a generous ceiling of turns. */
async function until(condition: () => boolean, what = 'the condition'): Promise<void> {
  for (let i = 0; i < 2_000 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  if (!condition()) throw new Error(`Timed out waiting for ${what}`);
}

/** Moves the clock timer by timer until `condition` holds. */
async function clockUntil(condition: () => boolean, what = 'the condition'): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) {
    await settle();
    if (!condition()) await jest.advanceTimersToNextTimerAsync();
  }
  if (!condition()) throw new Error(`Timed out waiting for ${what}`);
}

/** Tracks a promise's outcome, to check that it has (not) settled yet. */
function tracked<T>(promise: Promise<T>): { settled: boolean; value?: T; error?: unknown } {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

/**
 * `promise`, awaited within `until`'s ceiling of turns: a start() or stop() that a change keeps
 * from settling fails its test at once, rather than hanging it (and the teardown) until the runner
 * gives up.
 */
async function settled<T>(promise: Promise<T>, what: string): Promise<T> {
  const state = tracked(promise);
  await until(() => state.settled, what);
  return promise;
}

describe('EventProcessor', () => {
  let store: ScriptedEventStore;
  let handler: RecordingHandler;
  let logger: RecordingLogger;
  let parking: SqliteCheckpointStore;
  let processors: EventProcessor[];

  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'queueMicrotask'] });
    store = new ScriptedEventStore();
    handler = new RecordingHandler();
    logger = new RecordingLogger();
    parking = SqliteCheckpointStore.open(':memory:');
    processors = [];
  });

  afterEach(async () => {
    for (const subscription of store.subscriptions) subscription.closeGate = Promise.resolve();
    try {
      await settled(Promise.all(processors.map((p) => p.stop())), 'the processors to stop');
    } finally {
      await parking.close();
      jest.useRealTimers();
    }
  });

  /** A processor of `handler` on `store`, with retries at 100 ms doubling up to 10 s, and no silence warning. */
  function processor(options: Partial<EventProcessorOptions> = {}): EventProcessor {
    const created = new EventProcessor(store, handler, {
      parking,
      logger,
      retryDelayMs: 100,
      silenceWarningMs: 0,
      ...options,
    });
    processors.push(created);
    return created;
  }

  /** A processor started on a log it has caught up with at once: what follows is live. */
  async function live(options: Partial<EventProcessorOptions> = {}): Promise<EventProcessor> {
    store.scripts.push([caughtUp]);
    const p = processor(options);
    await settled(p.start(), 'the start');
    return p;
  }

  /** Stops `p`, then lets a minute pass: a retry it was waiting for would have run by then. */
  async function stopAndWait(p: EventProcessor): Promise<void> {
    await settled(p.stop(), 'the stop');
    await jest.advanceTimersByTimeAsync(60_000);
  }

  /** Starts `p`, its start() observed rather than awaited. */
  function started(p: EventProcessor) {
    return tracked(p.start());
  }

  describe('options', () => {
    it.each([
      [{ batchSize: 0 }, 'batchSize must be a positive integer'],
      [{ batchSize: 1.5 }, 'batchSize must be a positive integer'],
      [{ maxAttempts: 0 }, 'maxAttempts must be a positive integer'],
      [{ maxAttempts: 2.5 }, 'maxAttempts must be a positive integer'],
    ])('refuses %j', (options, message) => {
      expect(() => processor(options)).toThrow(new RangeError(message));
    });

    it('accepts a batch of one event and a single attempt', () => {
      expect(processor({ batchSize: 1, maxAttempts: 1 }).name).toBe('tested');
    });

    it("logs through Nest's Logger under the processor's name when given no logger", async () => {
      const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
      try {
        await live({ logger: undefined });
        expect(log).toHaveBeenCalledWith('Caught up after the start');
        expect((log.mock.contexts[0] as unknown as { context: string }).context).toBe(
          'EventProcessor(tested)',
        );
      } finally {
        log.mockRestore();
      }
    });

    it('names its errors, keeping their cause', () => {
      const cause = new Error('550 mailbox unavailable');
      expect(new PermanentFailure('refused', { cause })).toMatchObject({ name: 'PermanentFailure', cause });
      expect(new StoreReplacedError('wiped').name).toBe('StoreReplacedError');
    });
  });

  describe('start and stop', () => {
    it('starts once', async () => {
      const p = await live();
      expect(() => p.start()).toThrow('An event processor starts once');
    });

    it('never starts once stopped, and stops again harmlessly', async () => {
      const p = processor();
      await settled(p.stop(), 'the stop');
      await settled(p.stop(), 'the stop');
      expect(() => p.start()).toThrow('An event processor starts once');
      expect(store.subscriptions).toHaveLength(0);
    });

    it('stopped before catching up: start() rejects, the subscription is closed, nothing is said to have failed', async () => {
      const p = processor();
      const start = started(p);
      await until(() => store.subscriptions.length === 1, 'the subscription');
      await settled(p.stop(), 'the stop');
      await until(() => start.settled);
      expect(start.error).toEqual(new Error('The tested processor stopped before catching up'));
      expect(store.subscriptions[0].closeCalls).toBeGreaterThan(0);
      expect(logger.warnings).toEqual([]);
      expect(logger.errors).toEqual([]);
    });

    it('says so when closing the subscription fails, and stops all the same', async () => {
      const p = await live();
      store.subscriptions[0].closeError = new Error('socket gone');
      await settled(p.stop(), 'the stop');
      expect(logger.warnings).toEqual(['Closing the subscription failed: socket gone']);
    });

    it('touches the handler no more once stop() is called, dropping the events gathered but not handled', async () => {
      const p = await live();
      store.subscriptions[0].push(event(1), event(2));
      await settled(p.stop(), 'the stop');
      await settle();
      expect(handler.attempts).toEqual([]);
      expect(handler.commits).toEqual([]);
    });
  });

  describe('what it subscribes to', () => {
    it('the whole log from the start, without a filter, when it has no checkpoint and no event types', async () => {
      await live();
      expect(Object.keys(store.subscriptions[0].options)).toEqual([]);
    });

    it('what follows its stored checkpoint, of its event types only', async () => {
      handler.checkpoint = position(5);
      handler.eventTypes = ['A.v1', 'B.v1'];
      await live();
      expect(store.subscriptions[0].options).toEqual({ after: position(5), eventTypes: ['A.v1', 'B.v1'] });
    });

    it('the whole log, with a warning naming it, when the stored checkpoint names no position of any log', async () => {
      handler.checkpoint = { commit: 2n ** 63n, prepare: 2n ** 63n };
      await live();
      expect(store.subscriptions[0].options).toEqual({});
      expect(logger.warnings).toEqual([
        `The stored checkpoint of the tested processor (${2n ** 63n}) names no position of any log ` +
          '(at or above 2^63); starting from the beginning',
      ]);
    });

    it('nothing, when the checkpoint lies beyond the log: it stops for good, and says why', async () => {
      handler.checkpoint = position(12);
      store.head = position(5);
      const p = processor();
      const start = started(p);
      const failed = tracked(p.failed);
      await until(() => start.settled && failed.settled);
      expect(start.error).toBeInstanceOf(CheckpointBeyondHeadError);
      expect(failed.value).toBe(start.error);
      expect(logger.errors).toEqual([`The tested processor stops: ${(start.error as Error).message}`]);
      await jest.advanceTimersByTimeAsync(60_000);
      expect(handler.loads).toBe(1);
      expect(store.subscriptions).toHaveLength(0);
    });
  });

  describe('batches', () => {
    it('handles the events at hand in order and commits them once, at the last, on catching up', async () => {
      store.scripts.push([event(1), event(2), event(3), caughtUp]);
      const p = processor();
      expect(p.position).toBeNull();
      expect(p.isCaughtUp).toBe(false);
      await settled(p.start(), 'the start');
      expect(handler.handled).toEqual(['1', '2', '3']);
      expect(handler.commits).toEqual(['3']);
      expect(p.position).toEqual(position(3));
      expect(p.isCaughtUp).toBe(true);
      expect(logger.logs).toEqual(['Caught up after position 3']);
    });

    it('commits every batchSize events', async () => {
      store.scripts.push([event(1), event(2), event(3), event(4), event(5), caughtUp]);
      await settled(processor({ batchSize: 2 }).start(), 'the start');
      expect(handler.commits).toEqual(['2', '4', '5']);
    });

    it('commits a live event at the next turn', async () => {
      store.scripts.push([event(1), caughtUp]);
      const p = processor();
      await settled(p.start(), 'the start');
      store.subscriptions[0].push(event(2));
      await until(() => handler.commits.length === 2, 'the commit');
      expect(p.position).toEqual(position(2));
      expect(handler.commits).toEqual(['1', '2']);
    });

    it('gives as its position the last commit, not an event gathered before it', async () => {
      const p = await live();
      store.subscriptions[0].push(event(4));
      await until(() => handler.commits.length === 1, 'the first commit');
      await settle();
      expect(p.position).toEqual(position(4));
      store.subscriptions[0].push(event(6));
      await until(() => handler.commits.length === 2, 'the second commit');
      expect(p.position).toEqual(position(6));
    });

    it('skips the events at or before the last one taken in, which a server may send again', async () => {
      handler.checkpoint = position(5);
      store.scripts.push([event(4), event(5), event(6), event(6), event(5), event(7), caughtUp]);
      await settled(processor().start(), 'the start');
      expect(handler.handled).toEqual(['6', '7']);
      expect(handler.commits).toEqual(['7']);
    });

    it("commits at the filter's checkpoint beyond the batch's last event, and never goes back from it", async () => {
      store.scripts.push([event(3), checkpoint(5), event(4), caughtUp]);
      await settled(processor().start(), 'the start');
      expect(handler.handled).toEqual(['3', '4']);
      expect(handler.commits).toEqual(['5']);
    });

    it('commits no filter checkpoint at or before the one it holds', async () => {
      handler.checkpoint = position(5);
      store.scripts.push([checkpoint(5), checkpoint(4), caughtUp]);
      await settled(processor().start(), 'the start');
      expect(handler.commits).toEqual([]);
      store.subscriptions[0].push(checkpoint(7));
      await until(() => handler.commits.length > 0, 'a commit');
      expect(handler.commits).toEqual(['7']);
    });

    it('says it caught up once, not again when the subscription is reopened', async () => {
      store.scripts.push([caughtUp], [caughtUp]);
      const p = processor();
      await settled(p.start(), 'the start');
      store.subscriptions[0].end();
      await clockUntil(() => store.subscriptions.length === 2 && store.subscriptions[1].nextCalls >= 2);
      await settle();
      expect(logger.logs).toEqual(['Caught up after the start']);
    });
  });

  describe('idle commits (a filtered subscription moving past other events)', () => {
    beforeEach(() => {
      handler.idleCommitMs = 50;
    });

    /** Started, caught up and committed at 3 "now"; then checkpoint 10 arrives and waits for its commit. */
    async function deferredCheckpoint(): Promise<EventProcessor> {
      store.scripts.push([event(3), caughtUp]);
      const p = processor();
      await settled(p.start(), 'the start');
      store.subscriptions[0].push(checkpoint(10));
      await until(() => jest.getTimerCount() === 1, 'the idle commit timer');
      return p;
    }

    it('commits the first one at once', async () => {
      store.scripts.push([checkpoint(10)]);
      started(processor());
      await until(() => handler.commits.length > 0, 'a commit');
      expect(handler.commits).toEqual(['10']);
    });

    it('commits one idleCommitMs after the last commit, not before', async () => {
      await deferredCheckpoint();
      await settle();
      expect(handler.commits).toEqual(['3']);
      await jest.advanceTimersByTimeAsync(49);
      await settle();
      expect(handler.commits).toEqual(['3']);
      await jest.advanceTimersByTimeAsync(1);
      await until(() => handler.commits.length === 2, 'the idle commit');
      expect(handler.commits).toEqual(['3', '10']);
    });

    it('commits at once when idleCommitMs has passed since the last commit', async () => {
      store.scripts.push([event(3), caughtUp]);
      await settled(processor().start(), 'the start');
      await jest.advanceTimersByTimeAsync(60);
      store.subscriptions[0].push(checkpoint(10));
      await until(() => handler.commits.length === 2, 'the idle commit');
      expect(handler.commits).toEqual(['3', '10']);
    });

    it('commits an event that arrives meanwhile at once, past the waiting checkpoint', async () => {
      await deferredCheckpoint();
      store.subscriptions[0].push(event(11));
      await until(() => handler.commits.length === 2, 'the commit of the event');
      expect(handler.commits).toEqual(['3', '11']);
    });

    it('keeps waiting for the due time through another checkpoint, and still commits an event at once', async () => {
      await deferredCheckpoint();
      store.subscriptions[0].push(checkpoint(12));
      await settle();
      expect(handler.commits).toEqual(['3']);
      store.subscriptions[0].push(event(13));
      await until(() => handler.commits.length === 2, 'the commit of the event');
      expect(handler.commits).toEqual(['3', '13']);
    });

    it('commits no checkpoint waiting for its due time once stopped', async () => {
      const p = await deferredCheckpoint();
      await stopAndWait(p);
      expect(handler.commits).toEqual(['3']);
    });
  });

  describe('failures of the store', () => {
    it('retries with a back-off that doubles up to maxRetryDelayMs, from the checkpoint read again', async () => {
      handler.loadFailures.push(new Error('store down'), new Error('store down'));
      store.scripts.push([caughtUp]);
      const start = started(processor({ maxRetryDelayMs: 150 }));
      await until(() => logger.errors.length === 1, 'the first error');
      expect(logger.errors).toEqual(['Processing failed after the start: store down; retrying in 100 ms']);
      await jest.advanceTimersByTimeAsync(99);
      expect(handler.loads).toBe(1);
      await jest.advanceTimersByTimeAsync(1);
      await until(() => logger.errors.length === 2, 'the second error');
      expect(logger.errors[1]).toBe('Processing failed after the start: store down; retrying in 150 ms');
      await jest.advanceTimersByTimeAsync(149);
      expect(handler.loads).toBe(2);
      await jest.advanceTimersByTimeAsync(1);
      await until(() => start.settled, 'catching up');
      expect(start.error).toBeUndefined();
      expect(handler.discards).toBe(3);
    });

    it('reopens a subscription that ends by itself after the first back-off again, closing the old one', async () => {
      handler.checkpoint = position(7, 5);
      handler.loadFailures.push(new Error('store down'));
      store.scripts.push([caughtUp], [caughtUp]);
      const p = processor();
      const start = started(p);
      await clockUntil(() => start.settled, 'catching up');
      store.subscriptions[0].end();
      await until(() => logger.warnings.length === 1, 'the warning');
      expect(logger.warnings).toEqual(['Subscription ended unexpectedly; reopening after position 7:5']);
      expect(store.subscriptions[0].closeCalls).toBe(1);
      await jest.advanceTimersByTimeAsync(99);
      expect(store.subscriptions).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(1);
      await until(() => store.subscriptions.length === 2, 'the new subscription');
      expect(store.subscriptions[1].options).toEqual({ after: position(7, 5) });
    });

    it('stops at once while waiting to retry', async () => {
      handler.loadFailures.push(new Error('store down'));
      const p = processor();
      started(p);
      await until(() => logger.errors.length === 1, 'the error');
      await stopAndWait(p);
      expect(handler.loads).toBe(1);
      expect(logger.warnings).toEqual([]);
    });

    it("retries a commit that fails, and says so with the commit's position", async () => {
      handler.onCommit = (_, call) => {
        if (call === 1) throw new Error('write conflict');
      };
      store.scripts.push([event(3), caughtUp]);
      const p = processor();
      const start = started(p);
      await until(() => logger.errors.length === 1, 'the error');
      expect(logger.errors).toEqual(['Committing at 3 failed: write conflict; retrying in 100 ms']);
      await jest.advanceTimersByTimeAsync(100);
      await until(() => start.settled, 'catching up');
      expect(handler.commits).toEqual(['3']);
      expect(handler.handled).toEqual(['3']);
    });

    it('retries a commit no more once stopped while waiting to retry it', async () => {
      handler.onCommit = () => {
        throw new Error('write conflict');
      };
      store.scripts.push([event(3), caughtUp]);
      const p = processor();
      started(p);
      await until(() => logger.errors.length === 1, 'the error');
      await stopAndWait(p);
      expect(handler.commitCalls).toBe(1);
      expect(logger.errors).toHaveLength(1);
    });

    it('neither logs nor retries a commit that fails once stop() was called', async () => {
      let failCommit!: (error: Error) => void;
      handler.onCommit = () => new Promise((_, reject) => (failCommit = reject));
      store.scripts.push([event(3), caughtUp]);
      const p = processor();
      started(p);
      await until(() => handler.commitCalls === 1, 'the commit');
      const stopping = tracked(p.stop());
      failCommit(new Error('connection closed'));
      await until(() => stopping.settled, 'the stop');
      expect(logger.errors).toEqual([]);
      expect(handler.commitCalls).toBe(1);
    });

    it('starts over from the checkpoint it reads again when the store was replaced under it', async () => {
      handler.onCommit = (_, call) => {
        if (call === 1) throw new StoreReplacedError('the read store was wiped');
      };
      store.scripts.push([event(3), caughtUp], [event(3), caughtUp]);
      const start = started(processor());
      await until(() => logger.errors.length === 1, 'the error');
      expect(logger.errors).toEqual([
        'Processing failed after the start: the read store was wiped; retrying in 100 ms',
      ]);
      expect(handler.discards).toBe(1);
      await jest.advanceTimersByTimeAsync(100);
      await until(() => start.settled, 'catching up');
      expect(handler.loads).toBe(2);
      expect(handler.discards).toBe(2);
      expect(store.subscriptions[0].closeCalls).toBe(1);
      expect(handler.commits).toEqual(['3']);
    });

    it('says nothing of a read that fails because stop() closed the subscription', async () => {
      const p = await live();
      store.subscriptions[0].rejectReadsOnClose = true;
      await stopAndWait(p);
      expect(store.subscriptions[0].closeCalls).toBe(1);
      expect(logger.errors).toEqual([]);
      expect(store.subscriptions).toHaveLength(1);
    });

    it('leaves no read of a dropped subscription to fail unheard', async () => {
      const unhandled: unknown[] = [];
      const listener = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', listener);
      try {
        handler.onCommit = (_, call) => {
          if (call === 1) throw new StoreReplacedError('the read store was wiped');
        };
        await live();
        store.subscriptions[0].rejectReadsOnClose = true;
        store.subscriptions[0].push(event(1));
        await until(() => logger.errors.length === 1, 'the error');
        await settle();
        expect(store.subscriptions[0].closeCalls).toBe(1);
        expect(unhandled).toEqual([]);
      } finally {
        process.off('unhandledRejection', listener);
      }
    });
  });

  describe('failures of a handler', () => {
    it('retries an event with a back-off that doubles up to maxRetryDelayMs, then goes on', async () => {
      handler.onHandle = (_, attempt) => {
        if (attempt < 3) throw new Error('flaky');
      };
      store.scripts.push([event(1), caughtUp]);
      const start = started(processor({ maxRetryDelayMs: 150 }));
      await until(() => logger.warnings.length === 1, 'the first warning');
      expect(logger.warnings).toEqual([
        'Handling Tested.v1 e1 at 1 in stream-1 failed (attempt 1): flaky; retrying in 100 ms',
      ]);
      await jest.advanceTimersByTimeAsync(99);
      expect(handler.attempts).toEqual(['1']);
      await jest.advanceTimersByTimeAsync(1);
      await until(() => logger.warnings.length === 2, 'the second warning');
      expect(logger.warnings[1]).toBe(
        'Handling Tested.v1 e1 at 1 in stream-1 failed (attempt 2): flaky; retrying in 150 ms',
      );
      await jest.advanceTimersByTimeAsync(150);
      await until(() => start.settled, 'catching up');
      expect(handler.attempts).toEqual(['1', '1', '1']);
      expect(handler.commits).toEqual(['1']);
      await expect(parking.parked()).resolves.toEqual([]);
    });

    it('parks an event after maxAttempts failures, with its reason, and goes on with the next', async () => {
      handler.onHandle = (e) => {
        if (e.id === 'e1') throw new Error('always');
      };
      store.scripts.push([event(1), event(2), caughtUp]);
      const p = processor({ maxAttempts: 3 });
      const start = started(p);
      await clockUntil(() => start.settled, 'catching up');
      expect(handler.attempts).toEqual(['1', '1', '1', '2']);
      expect(handler.commits).toEqual(['2']);
      expect(p.parkedSinceStart).toBe(1);
      await expect(parking.parked('tested')).resolves.toEqual([
        expect.objectContaining({
          processor: 'tested',
          eventId: 'e1',
          stream: 'stream-1',
          revision: 1,
          type: 'Tested.v1',
          position: position(1),
          reason: 'always',
          attempts: 3,
        }),
      ]);
      expect(logger.errors).toEqual([
        'Parking Tested.v1 e1 at 1 in stream-1 after 3 attempt(s): always. ' +
          'The others go on; `projections status` lists it, `projections parked` retries or drops it.',
      ]);
    });

    it('parks an event at its first permanent failure', async () => {
      handler.onHandle = () => {
        throw new PermanentFailure('550 no such mailbox');
      };
      store.scripts.push([event(1), caughtUp]);
      const p = processor();
      await settled(p.start(), 'the start');
      expect(handler.attempts).toEqual(['1']);
      expect(logger.warnings).toEqual([]);
      await expect(parking.parked('tested')).resolves.toEqual([
        expect.objectContaining({ eventId: 'e1', reason: '550 no such mailbox', attempts: 1 }),
      ]);
    });

    it('retries parking that fails, and counts the message once', async () => {
      jest.spyOn(parking, 'park').mockRejectedValueOnce(new Error('disk full'));
      handler.onHandle = () => {
        throw new PermanentFailure('refused');
      };
      store.scripts.push([event(1), caughtUp]);
      const p = processor();
      const start = started(p);
      await until(() => logger.errors.length === 2, 'the errors');
      expect(logger.errors[1]).toBe(
        'Parking Tested.v1 e1 at 1 in stream-1 failed: disk full; retrying in 100 ms',
      );
      await jest.advanceTimersByTimeAsync(100);
      await until(() => start.settled, 'catching up');
      expect(p.parkedSinceStart).toBe(1);
      await expect(parking.parked('tested')).resolves.toHaveLength(1);
    });

    it('stops at once while waiting to retry an event, without parking it or calling it a failure', async () => {
      handler.onHandle = () => {
        throw new Error('flaky');
      };
      store.scripts.push([event(1), caughtUp]);
      const p = processor();
      const start = started(p);
      await until(() => logger.warnings.length === 1, 'the warning');
      await stopAndWait(p);
      expect(start.settled).toBe(true);
      expect(handler.attempts).toEqual(['1']);
      expect(start.error).toEqual(new Error('The tested processor stopped before catching up'));
      expect(logger.errors).toEqual([]);
      await expect(parking.parked()).resolves.toEqual([]);
    });

    it('neither retries nor parks an event whose handling fails once stop() was called', async () => {
      let fail!: (error: Error) => void;
      handler.onHandle = () => new Promise((_, reject) => (fail = reject));
      store.scripts.push([event(1), caughtUp]);
      const p = processor({ maxAttempts: 1 });
      started(p);
      await until(() => handler.attempts.length === 1, 'the handling');
      const stopping = tracked(p.stop());
      fail(new Error('connection closed'));
      await until(() => stopping.settled, 'the stop');
      expect(logger.warnings).toEqual([]);
      expect(logger.errors).toEqual([]);
      await expect(parking.parked()).resolves.toEqual([]);
    });
  });

  describe('a store that does not answer while catching up', () => {
    it('says so every silenceWarningMs, with how long and what a ping of the store answers', async () => {
      store.pingAnswer = new Error('EventStoreDB did not answer within 5000 ms');
      started(processor({ silenceWarningMs: 5_000 }));
      await until(() => store.subscriptions.length === 1, 'the subscription');
      await jest.advanceTimersByTimeAsync(5_000);
      await until(() => logger.warnings.length === 1, 'the first warning');
      expect(logger.warnings).toEqual([
        'No answer from the event store for 5 s while catching up after the start ' +
          '(EventStoreDB did not answer within 5000 ms); still waiting',
      ]);
      store.pingAnswer = null;
      await jest.advanceTimersByTimeAsync(5_000);
      await until(() => logger.warnings.length === 2, 'the second warning');
      expect(logger.warnings[1]).toBe(
        'No answer from the event store for 10 s while catching up after the start (it answers a ping); still waiting',
      );
    });

    it('says nothing once caught up: a live subscription is quiet when nothing happens', async () => {
      await live({ silenceWarningMs: 5_000 });
      await jest.advanceTimersByTimeAsync(60_000);
      expect(store.pings).toBe(0);
      expect(logger.warnings).toEqual([]);
    });

    it('says nothing when silenceWarningMs is 0', async () => {
      started(processor({ silenceWarningMs: 0 }));
      await until(() => store.subscriptions.length === 1, 'the subscription');
      await jest.advanceTimersByTimeAsync(60_000);
      expect(store.pings).toBe(0);
      expect(logger.warnings).toEqual([]);
    });

    it('says nothing once stopping, while the subscription takes its time to close', async () => {
      let closed!: () => void;
      const p = processor({ silenceWarningMs: 5_000 });
      started(p);
      await until(() => store.subscriptions.length === 1, 'the subscription');
      store.subscriptions[0].closeGate = new Promise((resolve) => (closed = resolve));
      const stopping = tracked(p.stop());
      await jest.advanceTimersByTimeAsync(20_000);
      expect(store.pings).toBe(0);
      expect(logger.warnings).toEqual([]);
      closed();
      await until(() => stopping.settled, 'the stop');
    });
  });
});
