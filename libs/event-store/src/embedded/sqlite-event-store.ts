import Database from 'better-sqlite3';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { join } from 'node:path';
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
import { EVENTS_FILE, NO_UPDATE_TRIGGER, prepareSchema, SCHEMA_VERSION } from './events-schema';
import { type EventLog, type EventPage, SqliteSubscription } from './sqlite-subscription';
import { recordedStoreId, recordIdentity } from './sqlite-store-identity';
import { SqliteFilteredReader } from './sqlite-filtered-reader';
import { SqliteAppender, type SqliteEventStoreStats, serializeEvent } from './sqlite-appender';

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

/**
 * The write-ahead log is cut back to this size after each checkpoint, so that it never keeps the
 * space of a burst of writes: on a small disk that space may be what a recovery needs.
 */
const WAL_SIZE_LIMIT_BYTES = 1024 * 1024;

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
  private readonly selectStream: Database.Statement<[string, number], EventRow>;
  private readonly selectAfter: Database.Statement<[number, number], EventRow>;
  private readonly selectHead: Database.Statement<[], number | null>;
  private readonly selectLinkAndPrevious: Database.Statement<[number], EventRow>;

  private readonly pollIntervalMs: number;
  private readonly readBatchSize: number;
  private readonly appender: SqliteAppender;
  private readonly filtered: SqliteFilteredReader;
  /** `rewriteHistory` holds the write transaction open across awaits. */
  private rewriting = false;
  private closed = false;
  private readonly subscriptions = new Set<SqliteSubscription>();
  private readonly waiters = new Map<SqliteSubscription, Waiter>();
  private poller: NodeJS.Timeout | null = null;

  private constructor(
    private readonly db: Database.Database,
    options: SqliteEventStoreOptions,
  ) {
    super();
    this.pollIntervalMs = options.pollIntervalMs ?? 100;
    this.readBatchSize = options.readBatchSize ?? 1000;
    this.appender = new SqliteAppender(db, options.observer ?? null, () =>
      this.wakeWaiters(Number.POSITIVE_INFINITY),
    );
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
    this.selectLinkAndPrevious = db.prepare<[number], EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE position <= ? ORDER BY position DESC LIMIT 2`,
    );
    this.selectLinkAndPrevious.raw();
    this.selectHead = db.prepare<[], number | null>('SELECT max(position) FROM events');
    this.selectHead.pluck();
    this.filtered = new SqliteFilteredReader(
      db,
      options.filterWindow ?? 50_000,
      () => this.selectHead.get() ?? 0,
      () => this.assertOpen(),
    );
  }

  /**
   * Opens (creating if needed) `<dataDir>/events.db`. A new store records an identity, in the file
   * and in `store-id` beside it; a DATA_DIR whose `store-id` names a store that events.db does not
   * hold (missing, emptied, replaced) throws StoreLostError.
   */
  static open(dataDir: string, options: SqliteEventStoreOptions = {}): SqliteEventStore {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const file = join(dataDir, EVENTS_FILE);
    const recorded = recordedStoreId(dataDir, file);
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
      recordIdentity(db, dataDir, file, recorded);
      return new SqliteEventStore(db, options);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** Counters for benchmarks and tests: how well group commit groups. */
  stats(): SqliteEventStoreStats {
    return this.appender.stats();
  }

  override append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    // The executor runs now: a validation error rejects the promise and nothing is queued.
    return new Promise<AppendResult>((resolve, reject) => {
      this.assertOpen();
      if (this.rewriting)
        throw new Error('The history is being rewritten (history protect): nothing is appended meanwhile');
      validateAppend(stream, events, expected);
      this.appender.enqueue({ stream, events: events.map(serializeEvent), expected, resolve, reject });
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

  /** See {@link SqliteFilteredReader.queryLog}. */
  override async queryLog(query: LogQuery): Promise<LogPage> {
    this.assertOpen();
    validateLogQuery(query);
    return this.filtered.queryLog(query, query.after ? toSequence(query.after) : 0);
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

  /** Ready means able to write: see {@link SqliteAppender.probe}. */
  override ping(): Promise<void> {
    return settle(() => {
      this.assertOpen();
      this.appender.probe();
    });
  }

  override readonly chainScope = 'log';

  override async *readChain(after?: Position): AsyncGenerator<ChainLink> {
    // The whole chain from below any position: a row slipped in at 0 or below must be walked, and fail.
    let cursor = after === undefined ? Number.MIN_SAFE_INTEGER : toSequence(after);
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
      const wanted = events.map((event) => toSequence(event.position));
      if (wanted.length === 0) return [];
      // The event and the row before it, whatever that is: a deleted predecessor breaks the event.
      const linked = (link: EventRow | undefined, previous: EventRow | undefined): LinkedChainLink =>
        link === undefined
          ? { link: null, previous: null }
          : { link: toChainLink(link), previous: previous === undefined ? null : toChainLink(previous) };
      const lowest = Math.min(...wanted);
      const highest = Math.max(...wanted);
      if (highest - lowest >= 2 * wanted.length) {
        return wanted.map((at) => {
          const [link, previous] = this.selectLinkAndPrevious.all(at);
          return link?.[0] === at ? linked(link, previous) : linked(undefined, undefined);
        });
      }
      // A dense run (the chain watch's tail, a page of the log): the rows from the first one's
      // predecessor to the last, read at once instead of a query per event.
      const [atLowest, belowLowest] = this.selectLinkAndPrevious.all(lowest);
      const before = atLowest?.[0] === lowest ? belowLowest : atLowest;
      const rows = this.selectAfter.all(lowest - 1, highest - lowest + 1).filter((row) => row[0] <= highest);
      const index = new Map(rows.map((row, i) => [row[0], i]));
      return wanted.map((at) => {
        const i = index.get(at);
        return i === undefined
          ? linked(undefined, undefined)
          : linked(rows[i], i === 0 ? before : rows[i - 1]);
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
    this.appender.flush();
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
        this.appender.startChain();
        const { stream, event } = rewrite.record(summary);
        const { result } = this.appender.appendOne({
          stream,
          events: [serializeEvent(event)],
          expected: 'any',
        });
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
    this.appender.flush();
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
    return this.filtered.readPage(after, limit, types, except);
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

  private stopPoller(): void {
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The event store is closed');
  }
}

const byRevision = (a: EventRow, b: EventRow): number => a[3] - b[3];

/** Runs synchronous work behind the async port: a throw becomes a rejection. */
function settle<T>(work: () => T): Promise<T> {
  return new Promise<T>((resolve) => resolve(work()));
}

/** The embedded store gives both halves of a position the same sequence number. */
function toSequence(p: Position): number {
  return Number(p.commit);
}
