import { setImmediate as nextTurn } from 'node:timers/promises';
import type { EventSubscription, SubscriptionMessage } from '../event-store.port';
import { position } from '../position';
import { type EventRow, toRecordedEvent } from './event-row';

/** One read of the log: rows in order, and how far it looked. */
export interface EventPage {
  rows: EventRow[];
  /** The position the next read goes on from: the last row, or past rows a filter skipped. */
  scanned: number;
  /** More of the log lies beyond `scanned`. */
  more: boolean;
}

/** What a subscription needs from its store; kept narrow so the store's internals stay private. */
export interface EventLog {
  /** Up to `limit` rows after `after`, in order; of `types` only, unless null. */
  readPage(after: number, limit: number, types: readonly string[] | null): EventPage;
  /** Resolves when an event after `after` may exist, or when `subscription` is closed. */
  waitForEventsAfter(subscription: SqliteSubscription, after: number): Promise<void>;
  /** Called once when the subscription closes. */
  detach(subscription: SqliteSubscription): void;
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };
const CAUGHT_UP: IteratorYieldResult<SubscriptionMessage> = { done: false, value: { kind: 'caught-up' } };

/**
 * A pull-based catch-up subscription: each `next()` serves the current batch or reads the next one,
 * so a slow consumer holds at most one batch in memory. Single consumer, as `for await` is.
 */
export class SqliteSubscription implements EventSubscription, AsyncIterator<SubscriptionMessage> {
  private batch: EventRow[] = [];
  private index = 0;
  /** The last batch was full: more history is waiting. */
  private backlog = false;
  private caughtUp = false;
  private closed = false;
  /** Filtered: a position the scan passed beyond the rows in hand, to report once they are served. */
  private scannedPast: number | null = null;

  constructor(
    private readonly log: EventLog,
    /** Position up to which the log has been read; starts at the checkpoint. */
    private cursor: number,
    private readonly batchSize: number,
    /** Only rows of these types; null for every row. */
    private readonly eventTypes: readonly string[] | null = null,
  ) {}

  get isClosed(): boolean {
    return this.closed;
  }

  [Symbol.asyncIterator](): AsyncIterator<SubscriptionMessage> {
    return this;
  }

  async next(): Promise<IteratorResult<SubscriptionMessage>> {
    for (;;) {
      if (this.closed) return DONE;
      if (this.index < this.batch.length) {
        return { done: false, value: { kind: 'event', event: toRecordedEvent(this.batch[this.index++]) } };
      }
      if (this.scannedPast !== null) {
        const scanned = this.scannedPast;
        this.scannedPast = null;
        return { done: false, value: { kind: 'checkpoint', position: position(scanned) } };
      }
      if (this.backlog) {
        // A consumer that never awaits I/O would otherwise starve timers, sockets and group commits.
        await nextTurn();
        if (this.closed) return DONE;
      }
      const rows = this.read();
      if (rows.length > 0) {
        this.batch = rows;
        this.index = 0;
        continue;
      }
      if (this.backlog || this.scannedPast !== null) continue;
      this.batch = [];
      this.index = 0;
      if (!this.caughtUp) {
        this.caughtUp = true;
        return CAUGHT_UP;
      }
      await this.log.waitForEventsAfter(this, this.cursor);
    }
  }

  /** The next rows after the cursor, moving it on; sets `backlog` when more history is waiting. */
  private read(): EventRow[] {
    const { rows, scanned, more } = this.log.readPage(this.cursor, this.batchSize, this.eventTypes);
    this.backlog = more;
    const last = rows.length > 0 ? rows[rows.length - 1][0] : this.cursor;
    if (scanned > last) this.scannedPast = scanned;
    this.cursor = scanned;
    return rows;
  }

  /** Called by `for await` on `break` or a throw in the loop body. */
  async return(): Promise<IteratorResult<SubscriptionMessage>> {
    await this.close();
    return DONE;
  }

  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.batch = [];
      this.log.detach(this);
    }
    return Promise.resolve();
  }
}
