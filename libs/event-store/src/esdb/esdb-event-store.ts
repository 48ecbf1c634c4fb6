import {
  BACKWARDS,
  CancelledError,
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
import { backOffDelay, TurnQueue } from '@chronicle/config';
import { validateAppend } from '../append-validation';
import { validateLogQuery, validateReadAll, validFromRevision } from '../read-validation';
import {
  type AppendResult,
  type ChainRef,
  EventStore,
  type EventStoreObserver,
  type EventSubscription,
  type ExpectedRevision,
  InvalidPositionError,
  type LinkedChainLink,
  type LogPage,
  type LogQuery,
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
  toChainLink,
  toEsdbEvent,
  toEsdbExpectedRevision,
} from './esdb-events';
import { EsdbSubscription, type ResubscribeOptions } from './esdb-subscription';
import {
  isGrpcUnreachable,
  recognizeUnavailableErrors,
  StoreTimeoutError,
  withinDeadline,
} from '../store-unavailable';
import { matchesLogQuery } from '../log-query';
import { type ChainLink, chainHash, GENESIS_HASH } from '../integrity/history-chain';

/** Streams read at once to check the events a page serves against their chains. */
const CHAIN_READS_AT_ONCE = 16;
/** Streams whose last known hash is kept, so that a read-then-append needs no second read. */
const KNOWN_HEADS = 10_000;
/** Tries of an `any` or `stream_exists` append that other clients' writes keep overtaking. */
const ANY_APPEND_ATTEMPTS = 10;
/** Records read back from a stream's end to find our newest event past system events. */
const STREAM_END_PAGE = 16;

/** Where an append goes in its stream's chain: the revision it expects, and the hash before it. */
interface ChainPoint {
  expected: 'no_stream' | number;
  previous: string;
}

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
  /** How long one audit query scans `$all` before it answers with what it found (default 2 s). */
  queryBudgetMs?: number;
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
    error instanceof StoreTimeoutError ||
    // The client's probe of a new connection's features fails with the bare gRPC error.
    (typeof error === 'object' && error !== null && isGrpcUnreachable(error))
  );
}

/** Refuses a position the server would fail on rather than answer. */
function assertReadable(position: Position): void {
  const problem = positionProblem(position);
  if (problem !== null) throw new InvalidPositionError(formatPosition(position), problem);
}

/** EVENTSTORE_URL cannot be parsed; the detail quotes none of its credentials. */
export class InvalidConnectionStringError extends Error {
  constructor(readonly detail: string) {
    super(`Not a valid EventStoreDB connection string: ${detail}`);
    this.name = 'InvalidConnectionStringError';
  }
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
  private readonly queryBudgetMs: number;
  private closed = false;
  /** The last hash seen of recently read or written streams, by the revision it belongs to. */
  private readonly knownHeads = new Map<string, { revision: number; hash: string }>();
  /** The last `any`/`stream_exists` append of each stream with one under way, to queue behind. */
  private readonly appendsInTurn = new TurnQueue();

  /** Connects lazily: the first call opens the channel. `esdb://host:2113?tls=false` for a local node. */
  static connect(connectionString: string, options: EsdbEventStoreOptions = {}): EsdbEventStore {
    // The client's parse errors and its warnings (an unknown option) quote the string they parse:
    // the first parse, the one that judges the options, is of the string without its credentials.
    try {
      EventStoreDBClient.connectionString(connectionString.replace(/^([a-z+]+:\/\/)[^/?#]*@/i, '$1'));
    } catch (error) {
      throw new InvalidConnectionStringError((error as Error).message.replace(/ at position \d+/, ''));
    }
    let client: EventStoreDBClient;
    // Its warnings would be the first parse's again, with the password: the parse is synchronous,
    // so only its own are silenced.
    const warn = console.warn;
    console.warn = () => undefined;
    try {
      client = EventStoreDBClient.connectionString(connectionString);
    } catch {
      throw new InvalidConnectionStringError('its user name or password cannot be read');
    } finally {
      console.warn = warn;
    }
    return new EsdbEventStore(client, options);
  }

  constructor(
    private readonly client: EventStoreDBClient,
    options: EsdbEventStoreOptions = {},
  ) {
    super();
    // The API answers these 503: the server is down, frozen, or not the leader any more.
    recognizeUnavailableErrors([UnavailableError, DeadlineExceededError, NotLeaderError, CancelledError]);
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
    this.queryBudgetMs = options.queryBudgetMs ?? 2_000;
  }

  /**
   * Chains each event to the previous one of its stream: the server orders `$all` itself, so a
   * writer can only know its stream's predecessor. `any` and `stream_exists` become an exact
   * revision after reading the stream's end, so that no other write slips in between: appends of
   * this client to one stream take turns, another client's write in between means reading again.
   */
  override async append(
    stream: string,
    events: NewEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult> {
    this.assertOpen();
    validateAppend(stream, events, expected);
    if (typeof expected === 'number' || expected === 'no_stream') {
      return this.appendAt(stream, events, await this.chainPoint(stream, expected));
    }
    return this.appendsInTurn.run(stream, () => this.appendAtEnd(stream, events, expected));
  }

  private async appendAtEnd(
    stream: string,
    events: NewEvent[],
    expected: 'any' | 'stream_exists',
  ): Promise<AppendResult> {
    for (let attempt = 1; ; attempt++) {
      const end = await this.streamEnd(stream, END);
      if (end === null) {
        if (expected === 'stream_exists') throw new WrongExpectedRevisionError(stream, expected, 'no_stream');
      } else if (end.lastId === events[events.length - 1].id) {
        // A retry of an append that went through: answered as written, as the server would.
        return { nextExpectedRevision: end.revision, position: end.position };
      }
      const point: ChainPoint =
        end === null
          ? { expected: 'no_stream', previous: GENESIS_HASH }
          : { expected: end.revision, previous: end.hash };
      try {
        return await this.appendAt(stream, events, point);
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        if (attempt >= ANY_APPEND_ATTEMPTS)
          throw new WrongExpectedRevisionError(stream, expected, error.actual);
      }
    }
  }

  /** The hash an append after revision `expected` chains to: known from a read or write, or read. */
  private async chainPoint(stream: string, expected: 'no_stream' | number): Promise<ChainPoint> {
    if (expected === 'no_stream') return { expected, previous: GENESIS_HASH };
    const known = this.knownHeads.get(stream);
    if (known?.revision === expected) return { expected, previous: known.hash };
    const end = await this.streamEnd(stream, BigInt(expected));
    // A stream that does not reach `expected` conflicts on the server: any hash will do.
    return { expected, previous: end?.revision === expected ? end.hash : GENESIS_HASH };
  }

  /**
   * The stream read backwards from `from`: the revision and position of the first record, and the
   * hash of the newest of our events (system events, which carry none, are passed over).
   */
  private async streamEnd(
    stream: string,
    from: bigint | typeof END,
  ): Promise<{ revision: number; position: Position; lastId: string; hash: string } | null> {
    let page: ResolvedEvent[];
    try {
      page = await this.retrying(2, async () => {
        const read: ResolvedEvent[] = [];
        // Drained, never left early: a read given up half-way keeps its call open.
        for await (const resolved of this.client.readStream(stream, {
          fromRevision: from,
          direction: BACKWARDS,
          maxCount: STREAM_END_PAGE,
          deadline: this.callDeadlineMs,
        })) {
          read.push(resolved);
        }
        return read;
      });
    } catch (error) {
      if (error instanceof StreamNotFoundError) return null;
      throw error;
    }
    if (page.length === 0) return null;
    const last = page[0].event!;
    const ours = page.find(({ event }) => !isSystemEvent(event!.streamId, event!.type));
    return {
      revision: Number(last.revision),
      position: positionOf(page[0]),
      lastId: last.id,
      hash: ours === undefined ? GENESIS_HASH : fromResolvedEvent(ours).hash,
    };
  }

  private rememberHead(stream: string, revision: number, hash: string): void {
    // Re-inserted last: the map's order is the order of use, the oldest goes first.
    this.knownHeads.delete(stream);
    this.knownHeads.set(stream, { revision, hash });
    if (this.knownHeads.size > KNOWN_HEADS) this.knownHeads.delete(this.knownHeads.keys().next().value!);
  }

  private async appendAt(stream: string, events: NewEvent[], point: ChainPoint): Promise<AppendResult> {
    let previous = point.previous;
    const first = (point.expected === 'no_stream' ? -1 : point.expected) + 1;
    const data = events.map((event, offset) => {
      previous = chainHash('stream', chainLinkOf(stream, first + offset, event), previous);
      return toEsdbEvent(event, previous);
    });
    try {
      // The same event ids (and hashes) on every try: the server recognises a write that went
      // through and answers it again instead of writing twice.
      const result = await this.retrying(this.appendAttempts, () =>
        this.client.appendToStream(stream, data, {
          expectedRevision: toEsdbExpectedRevision(point.expected),
          deadline: this.callDeadlineMs,
        }),
      );
      if (!result.position) throw new Error(`Append to ${stream} returned no position`);
      this.observer?.committed(events.length);
      const nextExpectedRevision = Number(result.nextExpectedRevision);
      this.rememberHead(stream, nextExpectedRevision, previous);
      return { nextExpectedRevision, position: fromEsdbPosition(result.position) };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        const actual = error.actualVersion;
        throw new WrongExpectedRevisionError(
          stream,
          point.expected,
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
    const fromRevision = validFromRevision(options.fromRevision);
    const events = await this.readStreamEvents(stream, fromRevision);
    const last = events.at(-1);
    if (last !== undefined) this.rememberHead(stream, last.revision, last.hash);
    return events;
  }

  private async readStreamEvents(stream: string, fromRevision: number): Promise<RecordedEvent[]> {
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
    validateReadAll(options);
    const { limit, eventTypes, exceptTypes } = options;
    let remaining = limit ?? Number.POSITIVE_INFINITY;
    if (remaining === 0) return;
    // The client's $all read takes no filter: other types are skipped here.
    const types = eventTypes === undefined ? null : new Set(eventTypes);
    const except = new Set(exceptTypes);
    for await (const event of this.readLog(options.after)) {
      if ((types !== null && !types.has(event.type)) || except.has(event.type)) continue;
      yield event;
      if (--remaining === 0) return;
    }
  }

  /**
   * The server filters `$all` by type or stream only, never by metadata: the log is scanned here,
   * page by page, for at most `queryBudgetMs`; a page cut short by the budget gives `next` where
   * the scan stopped, so that no record is skipped.
   */
  override async queryLog(query: LogQuery): Promise<LogPage> {
    validateLogQuery(query);
    const { limit } = query;
    const deadline = Date.now() + this.queryBudgetMs;
    const events: RecordedEvent[] = [];
    let scanned: Position | null = null;
    for await (const event of this.readLog(query.after)) {
      if (matchesLogQuery(event, query)) {
        // One more than the page holds tells whether a next page exists.
        if (events.length === limit) return { events, next: events[limit - 1].position };
        events.push(event);
      }
      scanned = event.position;
      if (Date.now() > deadline) return { events, next: scanned };
    }
    return { events, next: null };
  }

  override readonly chainScope = 'stream';

  override async *readChain(after?: Position): AsyncGenerator<ChainLink> {
    for await (const event of this.readLog(after)) yield toChainLink(event);
  }

  /**
   * Each stream read once, as stored: an event's predecessor is the stream's event before it. A few
   * streams at a time, so that a page of many streams does not flood the server with reads.
   */
  override async readChainLinks(events: readonly ChainRef[]): Promise<LinkedChainLink[]> {
    const streams = new Map<string, RecordedEvent[]>();
    const names = [...new Set(events.map((event) => event.stream))];
    for (let i = 0; i < names.length; i += CHAIN_READS_AT_ONCE) {
      const chunk = names.slice(i, i + CHAIN_READS_AT_ONCE);
      const read = await Promise.all(chunk.map((stream) => this.readStream(stream)));
      chunk.forEach((stream, index) => streams.set(stream, read[index]));
    }
    return events.map((event) => {
      const stored = streams.get(event.stream)!;
      const at = stored.findIndex((candidate) => candidate.revision === event.revision);
      if (at < 0) return { link: null, previous: null };
      return { link: toChainLink(stored[at]), previous: at === 0 ? null : toChainLink(stored[at - 1]) };
    });
  }

  /**
   * The application's events of `$all` after `after`, page by page, each read drained at once:
   * no server stream stays open while the caller is slow.
   */
  private async *readLog(from: Position | undefined): AsyncGenerator<RecordedEvent> {
    this.assertOpen();
    let after = from;
    if (after) assertReadable(after);
    for (;;) {
      const page = await this.readAllPage(after ?? START, FORWARDS, this.pageSize);
      for (const resolved of page) {
        const position = positionOf(resolved);
        // Reads include their start position; the port's `after` is exclusive.
        if (after && comparePositions(position, after) <= 0) continue;
        after = position;
        const event = resolved.event!;
        if (isSystemEvent(event.streamId, event.type)) continue;
        yield fromResolvedEvent(resolved);
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
        const delay = backOffDelay(attempt, { initialMs: this.retryDelayMs });
        if (Date.now() + delay + this.callDeadlineMs > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The event store is closed');
  }
}

/** The event as its stream's chain covers it before the server has placed and timed it. */
function chainLinkOf(stream: string, revision: number, event: NewEvent): Omit<ChainLink, 'hash'> {
  return {
    position: '',
    id: event.id,
    stream,
    revision,
    type: event.type,
    data: JSON.stringify(event.data),
    metadata: JSON.stringify(event.metadata),
    recordedAt: '',
  };
}
