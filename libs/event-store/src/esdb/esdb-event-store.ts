import {
  BACKWARDS,
  type Direction,
  END,
  EventStoreDBClient,
  FORWARDS,
  type ReadPosition,
  type ResolvedEvent,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
import { validateAppend } from '../append-validation';
import {
  type AppendResult,
  EventStore,
  type EventSubscription,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type RecordedEvent,
  type SubscribeOptions,
  WrongExpectedRevisionError,
} from '../event-store.port';
import { comparePositions, type Position } from '../position';
import {
  fromEsdbPosition,
  fromResolvedEvent,
  isSystemEvent,
  positionOf,
  toEsdbEvent,
  toEsdbExpectedRevision,
} from './esdb-events';
import { EsdbSubscription, type ResubscribeOptions } from './esdb-subscription';

export interface EsdbEventStoreOptions {
  /** First wait before a dropped subscription resubscribes (default 250 ms), doubled per failure. */
  resubscribeInitialDelayMs?: number;
  /** Longest wait between resubscription attempts (default 10 s). */
  resubscribeMaxDelayMs?: number;
  /** Told of every subscription drop, e.g. to log it; the subscription resubscribes regardless. */
  onSubscriptionDropped?: ResubscribeOptions['onDropped'];
  /** Events per `$all` read request (default 500). */
  readPageSize?: number;
  /** How long `ping` waits for an answer (default 5 s). */
  pingTimeoutMs?: number;
}

/** The EventStore port on EventStoreDB (gRPC, `@eventstore/db-client` v6). */
export class EsdbEventStore extends EventStore {
  private readonly subscriptions = new Set<EsdbSubscription>();
  private readonly resubscribe: ResubscribeOptions;
  private readonly pageSize: number;
  private readonly pingTimeoutMs: number;
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
    };
    // A forward page repeats its start event, so one event per page must be new.
    this.pageSize = Math.max(2, options.readPageSize ?? 500);
    this.pingTimeoutMs = options.pingTimeoutMs ?? 5_000;
  }

  override async append(
    stream: string,
    events: NewEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult> {
    this.assertOpen();
    validateAppend(stream, events, expected);
    try {
      const result = await this.client.appendToStream(stream, events.map(toEsdbEvent), {
        expectedRevision: toEsdbExpectedRevision(expected),
      });
      if (!result.position) throw new Error(`Append to ${stream} returned no position`);
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
    const events: RecordedEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(stream, {
        fromRevision: BigInt(fromRevision),
        direction: FORWARDS,
      })) {
        events.push(fromResolvedEvent(resolved));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return events;
  }

  override async *readAll(options: ReadAllOptions = {}): AsyncGenerator<RecordedEvent> {
    const { limit } = options;
    if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0)) {
      throw new RangeError(`limit must be a non-negative integer, got ${limit}`);
    }
    this.assertOpen();
    let after = options.after;
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

  private async readAllPage(
    from: ReadPosition,
    direction: Direction,
    maxCount: number,
  ): Promise<ResolvedEvent[]> {
    const page: ResolvedEvent[] = [];
    for await (const resolved of this.client.readAll({ fromPosition: from, direction, maxCount })) {
      page.push(resolved);
    }
    return page;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The event store is closed');
  }
}
