import {
  BACKWARDS,
  DeadlineExceededError,
  type Direction,
  END,
  EventStoreDBClient,
  FORWARDS,
  NotLeaderError,
  type ReadPosition,
  type ResolvedEvent,
  START,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
import { validateAppend } from '../append-validation';
import {
  type AppendResult,
  EventStore,
  type EventStoreObserver,
  type EventSubscription,
  type ExpectedRevision,
  InvalidPositionError,
  type NewEvent,
  type ReadAllOptions,
  type RecordedEvent,
  type SubscribeOptions,
  WrongExpectedRevisionError,
} from '../event-store.port';
import { comparePositions, formatPosition, type Position, positionProblem } from '../position';
import {
  fromEsdbPosition,
  fromResolvedEvent,
  isInvalidArgument,
  isSystemEvent,
  positionOf,
  readLogEnd,
  toEsdbEvent,
  toEsdbExpectedRevision,
} from './esdb-events';
import { EsdbSubscription, type ResubscribeOptions } from './esdb-subscription';
import { StoreTimeoutError, withinDeadline } from '../store-unavailable';

export interface EsdbEventStoreOptions {
  /** First wait before a dropped subscription resubscribes (default 250 ms), doubled per failure. */
  resubscribeInitialDelayMs?: number;
  /** Longest wait between resubscription attempts (default 10 s). */
  resubscribeMaxDelayMs?: number;
  /** Told of every subscription drop, e.g. to log it; the subscription resubscribes regardless. */
  onSubscriptionDropped?: ResubscribeOptions['onDropped'];
  /** Told of every filter checkpoint the server sent that names no record of its log. */
  onCheckpointIgnored?: ResubscribeOptions['onCheckpointIgnored'];
  /** Events per `$all` read request (default 500). */
  readPageSize?: number;
  /** How long `ping` waits for an answer (default 5 s). */
  pingTimeoutMs?: number;
  /**
   * The deadline of each call (default 3 s), and the budget of one operation with its retries
   * (default 8 s): a frozen server fails a request within seconds, which the API answers 503.
   */
  callDeadlineMs?: number;
  operationBudgetMs?: number;
  /** Tries of an append that meets a transient cluster error (default 4): same ids, so idempotent. */
  appendAttempts?: number;
  /** Wait before the first retry of an append or read (default 100 ms), doubled per retry. */
  retryDelayMs?: number;
  /** Told of each append's size (one append is one commit). */
  observer?: EventStoreObserver;
}

/**
 * Errors after which the same call can succeed: the node is not (or no longer) the leader, or it
 * did not answer in time. The client reconnects on them, but only for the next call.
 */
export function isTransientEsdbError(error: unknown): boolean {
  return (
    error instanceof NotLeaderError ||
    error instanceof UnavailableError ||
    error instanceof DeadlineExceededError ||
    error instanceof StoreTimeoutError
  );
}

/** Refuses a position the server would fail on rather than answer. */
function assertReadable(position: Position): void {
  const problem = positionProblem(position);
  if (problem !== null) throw new InvalidPositionError(formatPosition(position), problem);
}

/** The EventStore port on EventStoreDB (gRPC, `@eventstore/db-client` v6). */
export class EsdbEventStore extends EventStore {
  private readonly subscriptions = new Set<EsdbSubscription>();
  private readonly resubscribe: ResubscribeOptions;
  private readonly pageSize: number;
  private readonly pingTimeoutMs: number;
  private readonly appendAttempts: number;
  private readonly retryDelayMs: number;
  private readonly observer: EventStoreObserver | null;
  private readonly callDeadlineMs: number;
  private readonly operationBudgetMs: number;
  private closed = false;

  /** Connects lazily: the first call opens the channel. `esdb://host:2113?tls=false` for a local node. */
  static connect(connectionString: string, options: EsdbEventStoreOptions = {}): EsdbEventStore {
    return new EsdbEventStore(EventStoreDBClient.connectionString(connectionString), options);
  }

  constructor(
    private readonly client: EventStoreDBClient,
    options: EsdbEventStoreOptions = {},
  ) {
    super();
    this.resubscribe = {
      initialDelayMs: options.resubscribeInitialDelayMs ?? 250,
      maxDelayMs: options.resubscribeMaxDelayMs ?? 10_000,
      onDropped: options.onSubscriptionDropped,
      onCheckpointIgnored: options.onCheckpointIgnored,
    };
    // A forward page repeats its start event, so one event per page must be new.
    this.pageSize = Math.max(2, options.readPageSize ?? 500);
    this.pingTimeoutMs = options.pingTimeoutMs ?? 5_000;
    this.appendAttempts = Math.max(1, options.appendAttempts ?? 4);
    this.retryDelayMs = options.retryDelayMs ?? 100;
    this.observer = options.observer ?? null;
    this.callDeadlineMs = options.callDeadlineMs ?? 3_000;
    this.operationBudgetMs = options.operationBudgetMs ?? 8_000;
  }

  override async append(
    stream: string,
    events: NewEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult> {
    this.assertOpen();
    validateAppend(stream, events, expected);
    try {
      const data = events.map(toEsdbEvent);
      // The same event ids on every try: the server recognises a write that went through and
      // answers it again instead of writing twice.
      const result = await this.retrying(this.appendAttempts, () =>
        this.client.appendToStream(stream, data, {
          expectedRevision: toEsdbExpectedRevision(expected),
          deadline: this.callDeadlineMs,
        }),
      );
      if (!result.position) throw new Error(`Append to ${stream} returned no position`);
      this.observer?.committed(events.length);
      return {
        nextExpectedRevision: Number(result.nextExpectedRevision),
        position: fromEsdbPosition(result.position),
      };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        const actual = error.actualVersion;
        throw new WrongExpectedRevisionError(
          stream,
          expected,
          actual === 'no_stream' ? 'no_stream' : Number(actual),
        );
      }
      throw error;
    }
  }

  override async readStream(
    stream: string,
    options: { fromRevision?: number } = {},
  ): Promise<RecordedEvent[]> {
    this.assertOpen();
    const fromRevision = options.fromRevision ?? 0;
    if (!Number.isSafeInteger(fromRevision) || fromRevision < 0) {
      throw new RangeError(`fromRevision must be a non-negative integer, got ${fromRevision}`);
    }
    try {
      // A read changes nothing: once more after a transient error is safe.
      return await this.retrying(2, async () => {
        const events: RecordedEvent[] = [];
        for await (const resolved of this.client.readStream(stream, {
          fromRevision: BigInt(fromRevision),
          direction: FORWARDS,
          deadline: this.callDeadlineMs,
        })) {
          events.push(fromResolvedEvent(resolved));
        }
        return events;
      });
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
  }

  override async *readAll(options: ReadAllOptions = {}): AsyncGenerator<RecordedEvent> {
    const { limit } = options;
    if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0)) {
      throw new RangeError(`limit must be a non-negative integer, got ${limit}`);
    }
    this.assertOpen();
    let after = options.after;
    if (after) assertReadable(after);
    let remaining = limit ?? Number.POSITIVE_INFINITY;
    // The client's $all read takes no filter: other types are skipped here.
    const types = options.eventTypes === undefined ? null : new Set(options.eventTypes);
    // Page by page, each read drained at once: no server stream stays open while the caller is slow.
    while (remaining > 0) {
      const page = await this.readAllPage(after ?? START, FORWARDS, this.pageSize);
      for (const resolved of page) {
        const position = positionOf(resolved);
        // Reads include their start position; the port's `after` is exclusive.
        if (after && comparePositions(position, after) <= 0) continue;
        after = position;
        const event = resolved.event!;
        if (isSystemEvent(event.streamId, event.type) || (types !== null && !types.has(event.type))) continue;
        yield fromResolvedEvent(resolved);
        if (--remaining === 0) return;
      }
      if (page.length < this.pageSize) return;
    }
  }

  override subscribeToAll(options: SubscribeOptions = {}): EventSubscription {
    this.assertOpen();
    if (options.after) assertReadable(options.after);
    const subscription = new EsdbSubscription(
      this.client,
      options.after,
      this.resubscribe,
      (closed) => this.subscriptions.delete(closed),
      options.eventTypes === undefined ? null : [...new Set(options.eventTypes)],
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  override async headPosition(): Promise<Position | null> {
    this.assertOpen();
    let before: Position | undefined;
    // Usually the newest event is ours; a few more cover system events written after it.
    const pageSize = 16;
    for (;;) {
      const page = await this.readAllPage(before ?? END, BACKWARDS, pageSize);
      for (const resolved of page) {
        const position = positionOf(resolved);
        if (before && comparePositions(position, before) >= 0) continue;
        before = position;
        const event = resolved.event!;
        if (!isSystemEvent(event.streamId, event.type)) return position;
      }
      if (page.length < pageSize) return null;
    }
  }

  override endPosition(): Promise<Position | null> {
    this.assertOpen();
    return this.retrying(2, () => readLogEnd(this.client));
  }

  override async ping(): Promise<void> {
    this.assertOpen();
    const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`EventStoreDB did not answer within ${this.pingTimeoutMs} ms`)),
        this.pingTimeoutMs,
      );
    });
    const drained = (async () => {
      for await (const _ of read) {
        // Draining is the point: the answer proves the server reads its log.
      }
    })();
    try {
      await Promise.race([drained, timeout]);
    } catch (error) {
      // The read may still be pending; cancel it and let its own failure go.
      drained.catch(() => undefined);
      await read.cancel();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends every subscription, then releases the connection. */
  override async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((subscription) => subscription.close()));
    await this.client.dispose();
  }

  /** One page, drained at once; again once after a transient error, as a read changes nothing. */
  private async readAllPage(
    from: ReadPosition,
    direction: Direction,
    maxCount: number,
  ): Promise<ResolvedEvent[]> {
    try {
      return await this.retrying(2, async () => {
        const page: ResolvedEvent[] = [];
        for await (const resolved of this.client.readAll({
          fromPosition: from,
          direction,
          maxCount,
          deadline: this.callDeadlineMs,
        })) {
          page.push(resolved);
        }
        return page;
      });
    } catch (error) {
      if (typeof from === 'object' && isInvalidArgument(error)) {
        throw new InvalidPositionError(formatPosition(from), 'no record starts there');
      }
      throw error;
    }
  }

  /**
   * Runs `call` up to `attempts` times while it fails with a transient cluster error, and never
   * starts a try that could end past the operation's budget.
   */
  private async retrying<T>(attempts: number, call: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.operationBudgetMs;
    for (let attempt = 1; ; attempt++) {
      try {
        // The client's own deadline does not cover every wait (a batch append on a connection
        // that went silent waits for keep-alive): a try that takes longer is given up here.
        return await withinDeadline(call(), this.callDeadlineMs + 500, 'EventStoreDB');
      } catch (error) {
        if (attempt >= attempts || this.closed || !isTransientEsdbError(error)) throw error;
        const delay = this.retryDelayMs * 2 ** (attempt - 1);
        if (Date.now() + delay + this.callDeadlineMs > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The event store is closed');
  }
}
