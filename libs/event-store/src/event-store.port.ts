import type { ChainLink, ChainScope } from './integrity/history-chain';
import { Position } from './position';

/** How the writer of an event authenticated: HTTP credentials, none, the CLI, or the service itself. */
export type AuthMethod = 'basic' | 'bearer' | 'none' | 'cli' | 'system';

export interface AuthProvenance {
  method: AuthMethod;
  /** The id of the access token used (never the token itself); null unless `bearer`. */
  tokenId: string | null;
}

/** What every event carries besides its data (ARCHITECTURE.md, "Event model"). */
export interface EventMetadata {
  /** The account id that caused the event, `cli:<OS user>`, `anonymous` or `system`. */
  actor: string;
  /** The id the server gave the request (or CLI run) that started the work: never the client's. */
  correlationId: string;
  /** The client's own X-Request-Id, when it sent one: its reference, never a correlation. */
  clientRequestId?: string;
  /** How the work's caller authenticated; absent on events written before it was recorded. */
  auth?: AuthProvenance;
  /** The event or command id that directly caused this event, null for a request. */
  causationId: string | null;
  /** RFC 3339 UTC with milliseconds. */
  occurredAt: string;
  /** With tracing on: the OpenTelemetry trace, and the span within it, that wrote the event. */
  traceId?: string;
  spanId?: string;
  /**
   * `encrypted`: the personal values in the data are stored encrypted under their subject's key
   * (personal-data/); set by the store on append, or by `history protect`. `erased`: `history
   * protect` found them in plaintext with their subject already erased, and made them null.
   * Absent: written before values were encrypted, and not protected since.
   */
  personalData?: 'encrypted' | 'erased';
}

export type EventData = Record<string, unknown>;

/** Told how appends go, for metrics: the store never depends on how they are kept. */
export interface EventStoreObserver {
  /** An append settled after `seconds`, written (or recognised as a retry) or failed. */
  appended(seconds: number, ok: boolean): void;
  /** A transaction committed `events` events: a group of appends on the embedded store, one append on EventStoreDB. */
  committed(events: number): void;
}

export interface NewEvent<D extends EventData = EventData> {
  /** A UUID chosen by the writer, stable across retries so that a retried append is idempotent. */
  id: string;
  type: string;
  data: D;
  metadata: EventMetadata;
}

export interface RecordedEvent<D extends EventData = EventData> extends NewEvent<D> {
  stream: string;
  /** 0-based index of the event in its stream. */
  revision: number;
  position: Position;
  /**
   * RFC 3339 UTC, assigned by the store when it wrote the event (the embedded store in the
   * append's transaction, never decreasing with position; EventStoreDB: the server's `created`).
   */
  recordedAt: string;
  /** SHA-256 (hex) chaining the event to its predecessor (integrity/history-chain.ts). */
  hash: string;
  /** Its subject was erased: every personal value in `data` reads as null. */
  erased?: true;
}

/**
 * `no_stream`: the stream must not exist; `stream_exists`: it must; `any`: no check;
 * a number: the revision of the stream's last event must be exactly that.
 */
export type ExpectedRevision = 'no_stream' | 'stream_exists' | 'any' | number;

export interface AppendResult {
  /** Revision of the last event appended: the expected revision for the next append. */
  nextExpectedRevision: number;
  /** Position of the last event appended. */
  position: Position;
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    /** Revision of the stream's last event, or `no_stream`. */
    readonly actual: number | 'no_stream',
  ) {
    super(`Stream ${stream}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

/**
 * A position the store cannot read from: malformed, beyond 2^63, or (EventStoreDB) not the start of
 * a record. The caller sent it, so it is the caller's mistake, never the store's failure.
 */
export class InvalidPositionError extends Error {
  constructor(
    readonly position: string,
    reason: string,
  ) {
    super(`Position ${position} is not a position in the event log: ${reason}`);
    this.name = 'InvalidPositionError';
  }
}

/**
 * A consumer's stored checkpoint lies beyond the end of the log: the event store was replaced or
 * wiped while the checkpoint store kept its data. Following on would skip every event up to the
 * checkpoint, so the consumer stops and says how to rebuild.
 */
export class CheckpointBeyondHeadError extends Error {
  constructor(
    readonly consumer: string,
    readonly checkpoint: string,
    readonly head: string | null,
  ) {
    super(
      `The checkpoint of ${consumer} (${checkpoint}) lies beyond the end of the event log ` +
        `(${head === null ? 'the log is empty' : `head ${head}`}): the event store was wiped or replaced ` +
        'while the read store kept its checkpoints. Run `projections rebuild` to rebuild the read models ' +
        'from the event store as it is now.',
    );
    this.name = 'CheckpointBeyondHeadError';
  }
}

export type SubscriptionMessage =
  | { kind: 'event'; event: RecordedEvent }
  /**
   * Filtered subscriptions only: every event up to `position` has been delivered or skipped by
   * the filter, so a consumer may checkpoint there and not scan the skipped events again.
   */
  | { kind: 'checkpoint'; position: Position }
  /** Sent once, when the subscription has delivered the history and goes live. */
  | { kind: 'caught-up' };

export interface EventSubscription extends AsyncIterable<SubscriptionMessage> {
  /** Ends the iteration; safe to call more than once. */
  close(): Promise<void>;
}

export interface SubscribeOptions {
  /** Exclusive: the first event delivered is the one after this position. Absent: from the start. */
  after?: Position;
  /**
   * Only events of these types, as stored. The store skips the others itself (SQL, or
   * EventStoreDB's server-side filter), so a consumer of a few types does not read the whole log.
   */
  eventTypes?: readonly string[];
}

export interface ReadAllOptions {
  /** Exclusive: the first event read is the one after this position. Absent: from the start. */
  after?: Position;
  /** At most this many events. */
  limit?: number;
  /** Only events of these types, as stored; the embedded store skips the others in SQL. */
  eventTypes?: readonly string[];
  /**
   * Every event but those of these types, as stored (not with `eventTypes`): a reader that must
   * see every type it does not know of, but not the known ones it has no use for.
   */
  exceptTypes?: readonly string[];
}

/** A question to the whole log (the audit's): every given condition holds for each event. */
export interface LogQuery {
  /** Exclusive: only events after this position. */
  after?: Position;
  /** At most this many events; 1 or more. */
  limit: number;
  /** Only events of these types, as stored. */
  eventTypes?: readonly string[];
  actor?: string;
  correlationId?: string;
  /** RFC 3339 UTC with milliseconds: `since` <= recordedAt < `until`. */
  since?: string;
  until?: string;
}

export interface LogPage {
  /** Oldest first; `limit` of them unless the head was reached (or a scan's budget ran out). */
  events: RecordedEvent[];
  /** Where the next page starts (its `after`), or null when the log holds no more matches. */
  next: Position | null;
}

/** An event as the chain finds it: where it is. */
export type ChainRef = Pick<RecordedEvent, 'position' | 'stream' | 'revision'>;

/** An event's link as stored, with the link it chains to (null: the first of its chain). */
export interface LinkedChainLink {
  link: ChainLink | null;
  previous: ChainLink | null;
}

/**
 * The event store port. Adapters: `embedded/` (SQLite under DATA_DIR) and `esdb/` (EventStoreDB).
 * System streams (names starting with `$`) are never returned by readAll or subscriptions.
 */
export abstract class EventStore {
  /** Appends all events atomically, or none, checking the stream's revision first. */
  abstract append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;

  /**
   * One page of the events that match `query`, filled up to its limit or to the head. The store
   * answers it where it can (SQL with indexes on the embedded store); EventStoreDB, which cannot
   * filter by metadata, scans within a time budget and gives a `next` where it stopped.
   */
  abstract queryLog(query: LogQuery): Promise<LogPage>;

  /** The stream's events in order from `fromRevision` (default 0); a missing stream is `[]`. */
  abstract readStream(stream: string, options?: { fromRevision?: number }): Promise<RecordedEvent[]>;

  /** Every event in global order. */
  abstract readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent>;

  /** History after `after` (exclusive), then `caught-up`, then live events, until closed. */
  abstract subscribeToAll(options?: SubscribeOptions): EventSubscription;

  /** Position of the newest event, null for an empty store. */
  abstract headPosition(): Promise<Position | null>;

  /**
   * Position of the log's last record, the store's own records included, null for an empty log:
   * the furthest a consumer's checkpoint can be. Stores without records of their own: the head.
   */
  endPosition(): Promise<Position | null> {
    return this.headPosition();
  }

  /**
   * The same store read as events were stored, before any upcasting (the audit's raw view): the
   * adapter itself, reached through the one decorator that upcasts, never a second read path.
   */
  asStored(): EventStore {
    return this;
  }

  /** What each event's hash chains to: the whole log's predecessor, or the stream's. */
  abstract readonly chainScope: ChainScope;

  /**
   * Every event in global order as the chain covers it (only those after `after`, when given): as
   * stored, never upcast and never decrypted, for verification (integrity/chain-verifier.ts).
   */
  abstract readChain(after?: Position): AsyncIterable<ChainLink>;

  /**
   * For each of `events` (read before, from any view of this store), its link as stored now and the
   * link it chains to on this store's scope (null: the first of its chain); `link` is null when the
   * event is no longer there. Checks the events one page serves without walking the whole chain.
   */
  abstract readChainLinks(events: readonly ChainRef[]): Promise<LinkedChainLink[]>;

  /** Resolves when the store answers; for readiness checks. */
  abstract ping(): Promise<void>;

  abstract close(): Promise<void>;
}
