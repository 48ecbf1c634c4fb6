import type Database from 'better-sqlite3';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { LogPage, LogQuery } from '../event-store.port';
import { position } from '../position';
import { EVENT_COLUMNS, type EventRow, toRecordedEvent } from './event-row';
import type { EventPage } from './sqlite-subscription';

/**
 * The embedded store's filtered reads of its log: pages of some event types (readAll and
 * subscriptions) and the audit's log query. Apart from the store because they share what the
 * store's other work does not: a bounded scan window and statements prepared per shape of filter.
 */
export class SqliteFilteredReader {
  private readonly typeFilters = new Map<number, Database.Statement<unknown[], EventRow>>();
  private readonly queryShapes = new Map<string, Database.Statement<unknown[], EventRow>>();
  private readonly selectFirstRecordedFrom: Database.Statement<[string], number | null>;
  private readonly selectLastRecordedBefore: Database.Statement<[string], number | null>;

  /**
   * @param filterWindow positions scanned per query
   * @param head the newest position, 0 in an empty log
   * @param assertOpen throws once the store is closed
   */
  constructor(
    private readonly db: Database.Database,
    private readonly filterWindow: number,
    private readonly head: () => number,
    private readonly assertOpen: () => void,
  ) {
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
  }

  /** Up to `limit` rows after `after` of `types` (of every type but those when `except`). */
  readPage(after: number, limit: number, types: readonly string[], except: boolean): EventPage {
    // No more than `filterWindow` positions per call, so a rare type never holds the event loop
    // for a scan of the whole log. The head first: a row committed after it lies beyond it, so
    // nothing below is skipped.
    const head = this.head();
    const upTo = Math.min(head, after + this.filterWindow);
    if (upTo <= after || types.length === 0) return { rows: [], scanned: Math.max(after, upTo), more: false };
    const rows = this.selectTypesAfter(types.length, except).all(after, upTo, ...types, limit);
    const scanned = rows.length === limit ? rows[rows.length - 1][0] : upTo;
    return { rows, scanned, more: scanned < head };
  }

  /**
   * An actor's or a correlation's events are one query on its index. Otherwise the log is read
   * window by window (`filterWindow` positions per query, so that a rare type never holds the
   * event loop for a scan of the whole log) until the page is full or the head is reached. The
   * recorded time never decreases with position, so `since` and `until` become a position range
   * (one lookup each on the recorded_at index). `after` is the query's cursor as a sequence number.
   */
  async queryLog(query: LogQuery, after: number): Promise<LogPage> {
    const { limit } = query;
    let upTo = this.head();
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
}
