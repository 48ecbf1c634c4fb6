import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { join } from 'node:path';
import { writeFileDurablySync } from '@chronicle/config';
import {
  type AppendResult,
  type ChainRef,
  EventStore,
  type EventStoreObserver,
  type EventSubscription,
  type ExpectedRevision,
  type LinkedChainLink,
  type LogPage,
  type LogQuery,
  type NewEvent,
  type ReadAllOptions,
  type RecordedEvent,
  type SubscribeOptions,
  WrongExpectedRevisionError,
} from '../event-store.port';
import { validateAppend } from '../append-validation';
import { validateLogQuery, validateReadAll, validFromRevision } from '../read-validation';
import { type Position, position } from '../position';
import { type ChainLink, chainHash, GENESIS_HASH } from '../integrity/history-chain';
import { linkBreak } from '../integrity/chain-verifier';
import {
  HistoryBrokenError,
  type HistoryRewrite,
  type HistoryRewriteSummary,
} from '../integrity/history-rewrite';
import { EVENT_COLUMNS, type EventRow, toChainLink, toRecordedEvent } from './event-row';
import { NO_UPDATE_TRIGGER, prepareSchema, SCHEMA_VERSION } from './events-schema';
import { type EventLog, type EventPage, SqliteSubscription } from './sqlite-subscription';

export interface SqliteEventStoreOptions {
  /** How often live subscriptions look for events appended by other processes. Default 100 ms. */
  pollIntervalMs?: number;
  /** How long a commit waits for another process's write lock before failing. Default 10 s. */
  busyTimeoutMs?: number;
  /** Rows per query when reading all events or feeding subscriptions. Default 1,000. */
  readBatchSize?: number;
  /** Positions a filtered subscription scans per query. Default 50,000 (tens of milliseconds at most). */
  filterWindow?: number;
  /** Told of each group commit's size. */
  observer?: EventStoreObserver;
}

export interface SqliteEventStoreStats {
  /** Transactions committed, each holding a group of appends and costing one fsync. */
  commits: number;
  /** Appends that succeeded, idempotent retries included. */
  appends: number;
  /** Events written. */
  events: number;
}

/** An event id is unique in the embedded store; reusing one anywhere but in a retry is an error. */
export class DuplicateEventIdError extends Error {
  constructor(
    readonly stream: string,
    readonly eventId: string,
  ) {
    super(`Stream ${stream}: event id ${eventId} is already stored`);
    this.name = 'DuplicateEventIdError';
  }
}

export const EVENTS_FILE = 'events.db';
/** Beside events.db: the identity recorded when the store was created. */
export const STORE_ID_FILE = 'store-id';

/**
 * DATA_DIR holds a store's identity but not that store: events.db is missing, empty or another
 * store's. Starting on it would serve an empty or a foreign history as if it were this one.
 */
export class StoreLostError extends Error {
  constructor(
    readonly dataDir: string,
    reason: string,
  ) {
    super(
      `DATA_DIR (${dataDir}): ${reason}. The event history is not where it was: restore it from a backup ` +
        `(\`restore DIR\`), or, to start an empty store on purpose, remove ${join(dataDir, STORE_ID_FILE)}.`,
    );
    this.name = 'StoreLostError';
  }
}

/**
 * The write-ahead log is cut back to this size after each checkpoint, so that it never keeps the
 * space of a burst of writes: on a small disk that space may be what a recovery needs.
 */
const WAL_SIZE_LIMIT_BYTES = 1024 * 1024;

interface SerializedEvent {
  id: string;
  type: string;
  data: string;
  metadata: string;
}

interface PendingAppend {
  stream: string;
  events: SerializedEvent[];
  expected: ExpectedRevision;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

interface Applied {
  result: AppendResult;
  /** Events written: 0 for an idempotent retry. */
  written: number;
}

type Outcome = ({ ok: true } & Applied) | { ok: false; error: unknown };

/** The newest event as the chain needs it: where the next one goes, and what it chains to. */
interface ChainHead {
  position: number;
  recordedAt: string;
  hash: string;
}

interface Waiter {
  after: number;
  wake(): void;
}

/**
 * The embedded event store: one SQLite file under the data directory, shared safely by every
 * process (server, CLI) that opens it. Appends are group-committed: all appends requested before
 * the next turn of the event loop share one transaction and one fsync; a conflict or error fails
 * only its own append (multi-event appends run in a savepoint of their own).
 */
export class SqliteEventStore extends EventStore implements EventLog {
  private readonly insertEvent: Database.Statement<
    [number, string, string, number, string, string, string, string, string]
  >;
  private readonly selectChainHead: Database.Statement<[], [number, string, string]>;
  /** Read at the start of each commit (other processes append too), advanced by each append. */
  private chainHead: ChainHead = { position: 0, recordedAt: '', hash: '' };
  /** The recorded time of the commit under way: one clock reading per transaction. */
  private commitTime = '';
  private readonly selectLastRevision: Database.Statement<[string], number | null>;
  private readonly selectById: Database.Statement<[string], [string, number, number]>;
  private readonly selectIdAt: Database.Statement<[string, number], [string, number]>;
  private readonly selectStream: Database.Statement<[string, number], EventRow>;
  private readonly selectAfter: Database.Statement<[number, number], EventRow>;
  private readonly selectHead: Database.Statement<[], number | null>;
  private readonly selectLinkAndPrevious: Database.Statement<[number], EventRow>;
  private readonly probeWrite: Database.Statement<[string]>;
  /** Why the last commit failed (a full disk, an I/O error), until one succeeds again. */
  private writeFailure: string | null = null;
  private readonly typeFilters = new Map<number, Database.Statement<unknown[], EventRow>>();
  private readonly queryShapes = new Map<string, Database.Statement<unknown[], EventRow>>();
  private readonly selectFirstRecordedFrom: Database.Statement<[string], number | null>;
  private readonly selectLastRecordedBefore: Database.Statement<[string], number | null>;
  private readonly appendInSavepoint: Database.Transaction<(request: PendingAppend) => Applied>;
  private readonly commitGroup: Database.Transaction<(group: PendingAppend[], outcomes: Outcome[]) => void>;

  private readonly pollIntervalMs: number;
  private readonly readBatchSize: number;
  private readonly filterWindow: number;
  private queue: PendingAppend[] = [];
  /** `rewriteHistory` holds the write transaction open across awaits. */
  private rewriting = false;
  private flushScheduled = false;
  private closed = false;
  private readonly subscriptions = new Set<SqliteSubscription>();
  private readonly waiters = new Map<SqliteSubscription, Waiter>();
  private poller: NodeJS.Timeout | null = null;
  private readonly counters: SqliteEventStoreStats = { commits: 0, appends: 0, events: 0 };
  private readonly observer: EventStoreObserver | null;

  private constructor(
    private readonly db: Database.Database,
    options: SqliteEventStoreOptions,
  ) {
    super();
    this.pollIntervalMs = options.pollIntervalMs ?? 100;
    this.readBatchSize = options.readBatchSize ?? 1000;
    this.filterWindow = options.filterWindow ?? 50_000;
    this.observer = options.observer ?? null;
    this.insertEvent = db.prepare(
      'INSERT INTO events (position, id, stream, revision, type, data, metadata, recorded_at, hash)' +
        ' VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.selectChainHead = db.prepare<[], [number, string, string]>(
      'SELECT position, recorded_at, hash FROM events ORDER BY position DESC LIMIT 1',
    );
    this.selectChainHead.raw();
    this.selectLastRevision = db.prepare<[string], number | null>(
      'SELECT max(revision) FROM events WHERE stream = ?',
    );
    this.selectLastRevision.pluck();
    this.selectById = db.prepare<[string], [string, number, number]>(
      'SELECT stream, revision, position FROM events WHERE id = ?',
    );
    this.selectById.raw();
    this.selectIdAt = db.prepare<[string, number], [string, number]>(
      'SELECT id, position FROM events WHERE stream = ? AND revision = ?',
    );
    this.selectIdAt.raw();
    // Ordered by readStream, not by SQL: with ORDER BY, better-sqlite3 took 9 to 15 µs more per
    // call (measured, SQLite 3.54 as it builds it) although the (stream, revision) index yields
    // the rows in that order, and every command reads its stream once.
    this.selectStream = db.prepare<[string, number], EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE stream = ? AND revision >= ?`,
    );
    this.selectStream.raw();
    this.selectAfter = db.prepare<[number, number], EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`,
    );
    this.selectAfter.raw();
    this.selectFirstRecordedFrom = db
      .prepare<[string], number | null>( // Index order is (recorded_at, position): the first entry is the answer, no range is scanned.
        'SELECT position FROM events WHERE recorded_at >= ? ORDER BY recorded_at, position LIMIT 1',
      )
      .pluck();
    this.selectLastRecordedBefore = db
      .prepare<[string], number | null>(
        'SELECT position FROM events WHERE recorded_at < ? ORDER BY recorded_at DESC, position DESC LIMIT 1',
      )
      .pluck();
    this.selectLinkAndPrevious = db.prepare<[number], EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE position <= ? ORDER BY position DESC LIMIT 2`,
    );
    this.selectLinkAndPrevious.raw();
    this.selectHead = db.prepare<[], number | null>('SELECT max(position) FROM events');
    this.selectHead.pluck();
    this.probeWrite = db.prepare(
      'INSERT INTO write_probe (id, probed_at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET probed_at = excluded.probed_at',
    );
    this.appendInSavepoint = db.transaction((request: PendingAppend) => this.appendOne(request));
    this.commitGroup = db.transaction((group: PendingAppend[], outcomes: Outcome[]) => {
      this.startChain();
      for (const request of group) {
        try {
          // One INSERT is atomic by itself; a savepoint (about 15% of the cost) is for several.
          const applied =
            request.events.length === 1 ? this.appendOne(request) : this.appendInSavepoint(request);
          outcomes.push({ ok: true, ...applied });
        } catch (error) {
          // SQLite rolls the whole transaction back on some errors (I/O, full disk): fail the group.
          if (!db.inTransaction) throw error;
          outcomes.push({ ok: false, error });
        }
      }
    });
  }

  /**
   * Opens (creating if needed) `<dataDir>/events.db`. A new store records an identity, in the file
   * and in `store-id` beside it; a DATA_DIR whose `store-id` names a store that events.db does not
   * hold (missing, emptied, replaced) throws StoreLostError.
   */
  static open(dataDir: string, options: SqliteEventStoreOptions = {}): SqliteEventStore {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const file = join(dataDir, EVENTS_FILE);
    const recorded = readStoreId(dataDir);
    const size = statSync(file, { throwIfNoEntry: false })?.size;
    if (recorded !== null && !size) {
      throw new StoreLostError(
        dataDir,
        `${file} is ${size === undefined ? 'missing' : 'empty (0 bytes)'}, but ${STORE_ID_FILE} says store ${recorded} was created here`,
      );
    }
    // Private from its creation: SQLite gives the -wal and -shm files the database file's mode.
    closeSync(openSync(file, 'a', 0o600));
    const db = new Database(file, { timeout: options.busyTimeoutMs ?? 10_000 });
    try {
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version > SCHEMA_VERSION) {
        throw new Error(`${EVENTS_FILE} has schema version ${version}; this build knows ${SCHEMA_VERSION}`);
      }
      const mode = db.pragma('journal_mode = WAL', { simple: true }) as string;
      if (mode !== 'wal') throw new Error(`${EVENTS_FILE}: cannot use WAL journal mode (got ${mode})`);
      db.pragma('synchronous = FULL');
      db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
      prepareSchema(db, EVENTS_FILE);
      recordIdentity(db, dataDir, recorded);
      return new SqliteEventStore(db, options);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** Counters for benchmarks and tests: how well group commit groups. */
  stats(): SqliteEventStoreStats {
    return { ...this.counters };
  }

  override append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    // The executor runs now: a validation error rejects the promise and nothing is queued.
    return new Promise<AppendResult>((resolve, reject) => {
      this.assertOpen();
      if (this.rewriting)
        throw new Error('The history is being rewritten (history protect): nothing is appended meanwhile');
      validateAppend(stream, events, expected);
      const serialized = events.map(serializeEvent);
      this.queue.push({ stream, events: serialized, expected, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  override readStream(stream: string, options: { fromRevision?: number } = {}): Promise<RecordedEvent[]> {
    return settle(() => {
      this.assertOpen();
      const rows = this.selectStream.all(stream, validFromRevision(options.fromRevision));
      // Already in order when read through the index: one pass that changes nothing.
      return rows.sort(byRevision).map(toRecordedEvent);
    });
  }

  override async *readAll(options: ReadAllOptions = {}): AsyncGenerator<RecordedEvent> {
    validateReadAll(options);
    const { limit, eventTypes, exceptTypes } = options;
    let cursor = options.after ? toSequence(options.after) : 0;
    let remaining = limit ?? Number.POSITIVE_INFINITY;
    const listed = eventTypes ?? exceptTypes;
    const types = listed === undefined ? null : [...new Set(listed)];
    const except = exceptTypes !== undefined;
    // One query per batch, not one open cursor: no snapshot is held while the caller is slow.
    while (remaining > 0) {
      const { rows, scanned, more } = this.readPage(
        cursor,
        Math.min(this.readBatchSize, remaining),
        types,
        except,
      );
      cursor = scanned;
      for (const row of rows) yield toRecordedEvent(row);
      remaining -= rows.length;
      if (!more) return;
      // A consumer that never awaits I/O would otherwise starve timers, sockets and group commits.
      await nextTurn();
    }
  }

  /**
   * An actor's or a correlation's events are one query on its index. Otherwise the log is read
   * window by window (`filterWindow` positions per query, so that a rare type never holds the
   * event loop for a scan of the whole log) until the page is full or the head is reached. The
   * recorded time never decreases with position, so `since` and `until` become a position range
   * (one lookup each on the recorded_at index).
   */
  override async queryLog(query: LogQuery): Promise<LogPage> {
    this.assertOpen();
    validateLogQuery(query);
    const { limit } = query;
    let after = query.after ? toSequence(query.after) : 0;
    let upTo = this.selectHead.get() ?? 0;
    if (query.since !== undefined) {
      const first = this.selectFirstRecordedFrom.get(query.since);
      if (first == null) return { events: [], next: null };
      after = Math.max(after, first - 1);
    }
    if (query.until !== undefined) upTo = Math.min(upTo, this.selectLastRecordedBefore.get(query.until) ?? 0);
    const conditions: string[] = [];
    const values: unknown[] = [];
    // Equality on an indexed column first: SQLite then walks that index in position order.
    if (query.actor !== undefined) {
      conditions.push('actor = ?');
      values.push(query.actor);
    }
    if (query.correlationId !== undefined) {
      conditions.push('correlation_id = ?');
      values.push(query.correlationId);
    }
    if (query.eventTypes !== undefined) {
      const types = [...new Set(query.eventTypes)];
      if (types.length === 0) return { events: [], next: null };
      conditions.push(`type IN (${types.map(() => '?').join(', ')})`);
      values.push(...types);
    }
    const indexed = query.actor !== undefined || query.correlationId !== undefined;
    const statement = this.filteredRead(conditions);
    const rows: EventRow[] = [];
    // One more than the page holds tells whether a next page exists.
    while (rows.length <= limit && after < upTo) {
      const windowEnd = indexed ? upTo : Math.min(upTo, after + this.filterWindow);
      const found = statement.all(...values, after, windowEnd, limit + 1 - rows.length);
      rows.push(...found);
      after = windowEnd;
      if (rows.length <= limit && after < upTo) await nextTurn();
      this.assertOpen();
    }
    if (rows.length <= limit) return { events: rows.map(toRecordedEvent), next: null };
    const page = rows.slice(0, limit);
    return { events: page.map(toRecordedEvent), next: position(page[limit - 1][0]) };
  }

  override subscribeToAll(options: SubscribeOptions = {}): EventSubscription {
    this.assertOpen();
    const cursor = options.after ? toSequence(options.after) : 0;
    const eventTypes = options.eventTypes === undefined ? null : [...new Set(options.eventTypes)];
    const subscription = new SqliteSubscription(this, cursor, this.readBatchSize, eventTypes);
    this.subscriptions.add(subscription);
    this.poller ??= setInterval(() => this.poll(), this.pollIntervalMs).unref();
    return subscription;
  }

  override headPosition(): Promise<Position | null> {
    return settle(() => {
      this.assertOpen();
      const head = this.selectHead.get();
      return head == null ? null : position(head);
    });
  }

  /**
   * Ready means able to write: a read would succeed on a full disk. After a failed commit the
   * log is checkpointed and truncated first, which frees the space a small disk needs to recover.
   */
  override ping(): Promise<void> {
    return settle(() => {
      this.assertOpen();
      try {
        if (this.writeFailure !== null) this.db.pragma('wal_checkpoint(TRUNCATE)');
        this.probeWrite.run(new Date().toISOString());
      } catch (error) {
        this.writeFailure = describe(error);
        throw new Error(`${EVENTS_FILE} cannot be written: ${this.writeFailure}`, { cause: error });
      }
      this.writeFailure = null;
    });
  }

  override readonly chainScope = 'log';

  override async *readChain(): AsyncGenerator<ChainLink> {
    // From below any position: a row slipped in at 0 or below must be walked, and fail.
    let cursor = Number.MIN_SAFE_INTEGER;
    for (;;) {
      this.assertOpen();
      const rows = this.selectAfter.all(cursor, this.readBatchSize);
      for (const row of rows) yield toChainLink(row);
      if (rows.length < this.readBatchSize) return;
      cursor = rows[rows.length - 1][0];
      await nextTurn();
    }
  }

  override readChainLinks(events: readonly ChainRef[]): Promise<LinkedChainLink[]> {
    return settle(() => {
      this.assertOpen();
      // The event and the row before it, whatever that is: a deleted predecessor breaks the event.
      return events.map((event) => {
        const at = toSequence(event.position);
        const [link, previous] = this.selectLinkAndPrevious.all(at);
        if (link === undefined || link[0] !== at) return { link: null, previous: null };
        return { link: toChainLink(link), previous: previous === undefined ? null : toChainLink(previous) };
      });
    });
  }

  /**
   * Rewrites stored events (`history protect`) in one write transaction, so that a crash leaves
   * the history whole, as it was or as rewritten: each page of events is given to
   * `rewrite.rewrite`, each changed event stored with its new data and metadata, the chain
   * recomputed from the first changed event on, and the record of it appended last, chained to
   * the new head. The chain as found is checked on the way: over a break nothing is rewritten.
   * Nothing changed: nothing is written, and null is answered. The file is then vacuumed and its
   * write-ahead log emptied (on every run, so a run after a crash past the commit completes it),
   * so that no page keeps the old texts. Other processes' writes wait
   * for the transaction (up to the busy timeout) and fail: run it with no server on the store.
   */
  async rewriteHistory(
    rewrite: HistoryRewrite,
  ): Promise<(HistoryRewriteSummary & { recorded: Position }) | null> {
    this.assertOpen();
    this.flush();
    const update = this.db.prepare<[string, string, string, number]>(
      'UPDATE events SET data = ?, metadata = ?, hash = ? WHERE position = ?',
    );
    this.rewriting = true;
    let recorded: (HistoryRewriteSummary & { recorded: Position }) | null = null;
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const summary = await this.rewriteInTransaction(rewrite, update);
      if (summary === null) this.db.exec('ROLLBACK');
      else {
        this.db.exec(NO_UPDATE_TRIGGER);
        this.startChain();
        const { stream, event } = rewrite.record(summary);
        const { result } = this.appendOne({ stream, events: [serializeEvent(event)], expected: 'any' });
        this.db.exec('COMMIT');
        recorded = { ...summary, recorded: result.position };
      }
      // On a run with nothing left to rewrite too: a crash after the commit left the old pages.
      this.db.exec('VACUUM');
      this.db.pragma('wal_checkpoint(TRUNCATE)');
      return recorded;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    } finally {
      this.rewriting = false;
    }
  }

  private async rewriteInTransaction(
    rewrite: HistoryRewrite,
    update: Database.Statement<[string, string, string, number]>,
  ): Promise<HistoryRewriteSummary | null> {
    this.db.exec('DROP TRIGGER events_no_update');
    let previous: ChainLink | null = null;
    let hash = GENESIS_HASH;
    let firstChanged: string | null = null;
    let changed = 0;
    let erased = 0;
    let cursor = Number.MIN_SAFE_INTEGER;
    for (;;) {
      const rows = this.selectAfter.all(cursor, this.readBatchSize);
      const replacements = await rewrite.rewrite(rows.map(toRecordedEvent));
      rows.forEach((row, index) => {
        const link = toChainLink(row);
        const broken = linkBreak('log', link, previous);
        if (broken !== null) throw new HistoryBrokenError(broken);
        previous = link;
        const replacement = replacements[index];
        if (replacement !== null) {
          changed++;
          if (replacement.metadata.personalData === 'erased') erased++;
          firstChanged ??= link.position;
        }
        if (firstChanged === null) {
          hash = link.hash;
          return;
        }
        const data = replacement === null ? link.data : JSON.stringify(replacement.data);
        const metadata = replacement === null ? link.metadata : JSON.stringify(replacement.metadata);
        hash = chainHash('log', { ...link, data, metadata }, hash);
        update.run(data, metadata, hash, row[0]);
      });
      if (rows.length < this.readBatchSize) break;
      cursor = rows[rows.length - 1][0];
    }
    const last = previous as ChainLink | null;
    if (last === null || firstChanged === null) return null;
    const head = { position: last.position, recordedAt: last.recordedAt };
    return {
      oldHead: { ...head, hash: last.hash },
      newHead: { ...head, hash },
      firstChanged,
      changed,
      erased,
    };
  }

  /** Commits appends already requested, ends every subscription, then closes the file. */
  override async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    await Promise.all([...this.subscriptions].map((subscription) => subscription.close()));
    this.stopPoller();
    this.db.close();
  }

  /** @internal EventLog: readAll and subscriptions read the log through this. */
  readPage(after: number, limit: number, types: readonly string[] | null, except = false): EventPage {
    this.assertOpen();
    if (types === null || (except && types.length === 0)) {
      const rows = this.selectAfter.all(after, limit);
      return {
        rows,
        scanned: rows.length > 0 ? rows[rows.length - 1][0] : after,
        more: rows.length === limit,
      };
    }
    // Filtered: no more than `filterWindow` positions per call, so a rare type never holds the
    // event loop for a scan of the whole log. The head first: a row committed after it lies
    // beyond it, so nothing below is skipped.
    const head = this.selectHead.get() ?? 0;
    const upTo = Math.min(head, after + this.filterWindow);
    if (upTo <= after || types.length === 0) return { rows: [], scanned: Math.max(after, upTo), more: false };
    const rows = this.selectTypesAfter(types.length, except).all(after, upTo, ...types, limit);
    const scanned = rows.length === limit ? rows[rows.length - 1][0] : upTo;
    return { rows, scanned, more: scanned < head };
  }

  /** @internal EventLog, for subscriptions. */
  waitForEventsAfter(subscription: SqliteSubscription, after: number): Promise<void> {
    if (subscription.isClosed) return Promise.resolve();
    return new Promise<void>((wake) => this.waiters.set(subscription, { after, wake }));
  }

  /** @internal EventLog, for subscriptions. */
  detach(subscription: SqliteSubscription): void {
    this.waiters.get(subscription)?.wake();
    this.waiters.delete(subscription);
    this.subscriptions.delete(subscription);
    if (this.subscriptions.size === 0) this.stopPoller();
  }

  private flush(): void {
    this.flushScheduled = false;
    const group = this.queue;
    if (group.length === 0) return;
    this.queue = [];
    const outcomes: Outcome[] = [];
    try {
      this.commitGroup.immediate(group, outcomes);
    } catch (error) {
      this.writeFailure = describe(error);
      for (const request of group) request.reject(error);
      return;
    }
    this.writeFailure = null;
    this.counters.commits++;
    let written = 0;
    for (let i = 0; i < group.length; i++) {
      const outcome = outcomes[i];
      if (outcome.ok) {
        this.counters.appends++;
        written += outcome.written;
        group[i].resolve(outcome.result);
      } else {
        group[i].reject(outcome.error);
      }
    }
    this.counters.events += written;
    this.observer?.committed(written);
    this.wakeWaiters(Number.POSITIVE_INFINITY);
  }

  /** Runs inside the group's transaction, in a savepoint of its own. */
  private appendOne({
    stream,
    events,
    expected,
  }: Pick<PendingAppend, 'stream' | 'events' | 'expected'>): Applied {
    const retried = this.findRetriedAppend(stream, events, expected);
    if (retried) return { result: retried, written: 0 };
    const current = this.selectLastRevision.get(stream) ?? null;
    if (!revisionMatches(expected, current)) {
      throw new WrongExpectedRevisionError(stream, expected, current ?? 'no_stream');
    }
    let revision = current ?? -1;
    // Advanced only when every event is in: a failed savepoint leaves the head as it was.
    let { position: last, hash } = this.chainHead;
    const recordedAt = this.commitTime;
    for (const event of events) {
      revision++;
      last++;
      const link = { position: String(last), stream, revision, recordedAt, ...event };
      hash = chainHash('log', link, hash);
      try {
        this.insertEvent.run(
          last,
          event.id,
          stream,
          revision,
          event.type,
          event.data,
          event.metadata,
          recordedAt,
          hash,
        );
      } catch (error) {
        if (isUniqueIdViolation(error)) throw new DuplicateEventIdError(stream, event.id);
        throw error;
      }
    }
    this.chainHead = { position: last, recordedAt, hash };
    return { result: { nextExpectedRevision: revision, position: position(last) }, written: events.length };
  }

  /**
   * Inside the commit's write lock: the newest event (another process may have written it) and
   * this commit's recorded time, never before the newest event's.
   */
  private startChain(): void {
    const head = this.selectChainHead.get();
    this.chainHead =
      head === undefined
        ? { position: 0, recordedAt: '', hash: GENESIS_HASH }
        : { position: head[0], recordedAt: head[1], hash: head[2] };
    const now = new Date().toISOString();
    this.commitTime = now > this.chainHead.recordedAt ? now : this.chainHead.recordedAt;
  }

  /**
   * A retry after a lost reply: the same ids already stored in order where this append would have
   * put them. Answered with the original result and nothing written, as EventStoreDB does.
   */
  private findRetriedAppend(
    stream: string,
    events: SerializedEvent[],
    expected: ExpectedRevision,
  ): AppendResult | null {
    const first = this.selectById.get(events[0].id);
    if (!first || first[0] !== stream) return null;
    const firstRevision = first[1];
    if (typeof expected === 'number' && firstRevision !== expected + 1) return null;
    if (expected === 'no_stream' && firstRevision !== 0) return null;
    let last = first[2];
    for (let i = 1; i < events.length; i++) {
      const stored = this.selectIdAt.get(stream, firstRevision + i);
      if (!stored || stored[0] !== events[i].id) return null;
      last = stored[1];
    }
    return { nextExpectedRevision: firstRevision + events.length - 1, position: position(last) };
  }

  /** Wakes live subscriptions that may have something new; `head` is the newest position known. */
  private wakeWaiters(head: number): void {
    for (const [subscription, waiter] of this.waiters) {
      if (waiter.after < head) {
        this.waiters.delete(subscription);
        waiter.wake();
      }
    }
  }

  /** Other processes' appends are only visible in the file: look for a new head while anyone waits. */
  private poll(): void {
    if (this.waiters.size === 0 || this.closed) return;
    let head: number | null;
    try {
      head = this.selectHead.get() ?? null;
    } catch {
      // Transient (e.g. SQLITE_BUSY during WAL recovery): the next tick looks again.
      return;
    }
    if (head !== null) this.wakeWaiters(head);
  }

  /** The audit's read for one shape of conditions, prepared on first use. */
  private filteredRead(conditions: string[]): Database.Statement<unknown[], EventRow> {
    const where = [...conditions, 'position > ?', 'position <= ?'].join(' AND ');
    let statement = this.queryShapes.get(where);
    if (statement === undefined) {
      statement = this.db.prepare<unknown[], EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE ${where} ORDER BY position LIMIT ?`,
      );
      statement.raw();
      // Shapes are few (which filters, how many types), but never let them grow without bound.
      if (this.queryShapes.size >= 256) this.queryShapes.clear();
      this.queryShapes.set(where, statement);
    }
    return statement;
  }

  /**
   * The filtered read for `count` types (or for every type but those): one prepared statement per
   * count and kind, made on first use.
   */
  private selectTypesAfter(count: number, except: boolean): Database.Statement<unknown[], EventRow> {
    const key = except ? -count : count;
    let statement = this.typeFilters.get(key);
    if (statement === undefined) {
      statement = this.db.prepare<unknown[], EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE position > ? AND position <= ?` +
          ` AND type ${except ? 'NOT IN' : 'IN'} (${Array(count).fill('?').join(', ')}) ORDER BY position LIMIT ?`,
      );
      statement.raw();
      this.typeFilters.set(key, statement);
    }
    return statement;
  }

  private stopPoller(): void {
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The event store is closed');
  }
}

/** The identity DATA_DIR's `store-id` records, null when there is none. */
export function readStoreId(dataDir: string): string | null {
  try {
    return readFileSync(join(dataDir, STORE_ID_FILE), 'utf8').trim() || null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * The store's identity, in events.db first, then in `store-id` (a crash in between leaves only the
 * first, which the next open completes). A store from before identities takes the one recorded.
 */
function recordIdentity(db: Database.Database, dataDir: string, recorded: string | null): void {
  const stored = db.prepare<[], string>('SELECT store_id FROM store_identity WHERE id = 1').pluck().get();
  if (stored !== undefined && recorded !== null && stored !== recorded) {
    throw new StoreLostError(
      dataDir,
      `${join(dataDir, EVENTS_FILE)} is store ${stored}, but ${STORE_ID_FILE} says store ${recorded} was created here`,
    );
  }
  // Two processes opening a new store together agree on the first one's identity.
  if (stored === undefined) {
    db.prepare('INSERT OR IGNORE INTO store_identity (id, store_id) VALUES (1, ?)').run(
      recorded ?? randomUUID(),
    );
  }
  const id = db.prepare<[], string>('SELECT store_id FROM store_identity WHERE id = 1').pluck().get()!;
  if (recorded !== null) return;
  // Whole or not at all: a store-id left empty by a crash reads as none, which would turn the check
  // above off for good. Processes opening a new store together write the same identity.
  writeFileDurablySync(join(dataDir, STORE_ID_FILE), `${id}\n`);
}

const byRevision = (a: EventRow, b: EventRow): number => a[3] - b[3];

/** Runs synchronous work behind the async port: a throw becomes a rejection. */
function settle<T>(work: () => T): Promise<T> {
  return new Promise<T>((resolve) => resolve(work()));
}

function revisionMatches(expected: ExpectedRevision, current: number | null): boolean {
  switch (expected) {
    case 'any':
      return true;
    case 'no_stream':
      return current === null;
    case 'stream_exists':
      return current !== null;
    default:
      return current === expected;
  }
}

function serializeEvent(event: NewEvent): SerializedEvent {
  return {
    id: event.id,
    type: event.type,
    data: JSON.stringify(event.data),
    metadata: JSON.stringify(event.metadata),
  };
}

/** The embedded store gives both halves of a position the same sequence number. */
function toSequence(p: Position): number {
  return Number(p.commit);
}

/** By code, not `instanceof`: the native addon keeps the SqliteError class of whoever loaded it first. */
function isUniqueIdViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === 'SQLITE_CONSTRAINT_UNIQUE' && typeof message === 'string' && message.includes('events.id');
}

function describe(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === 'string' ? `${code}: ${String(message)}` : String(message);
}
