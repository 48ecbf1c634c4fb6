import type Database from 'better-sqlite3';
import {
  type AppendResult,
  type EventStoreObserver,
  type ExpectedRevision,
  type NewEvent,
  WrongExpectedRevisionError,
} from '../event-store.port';
import { position } from '../position';
import { chainHash, GENESIS_HASH } from '../integrity/history-chain';
import { EVENTS_FILE } from './events-schema';

/**
 * The embedded store's write path: appends group-committed (all appends requested before the next
 * turn of the event loop share one transaction and one fsync), each event chained to the one
 * before it, and whether the file can be written at all. Apart from the store's reads and
 * subscriptions, which share none of its statements or state.
 */

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

export interface SerializedEvent {
  id: string;
  type: string;
  data: string;
  metadata: string;
}

export interface PendingAppend {
  stream: string;
  events: SerializedEvent[];
  expected: ExpectedRevision;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

export interface Applied {
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

export class SqliteAppender {
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
  private readonly probeWrite: Database.Statement<[string]>;
  /** Why the last commit failed (a full disk, an I/O error), until one succeeds again. */
  private writeFailure: string | null = null;
  private readonly appendInSavepoint: Database.Transaction<(request: PendingAppend) => Applied>;
  private readonly commitGroup: Database.Transaction<(group: PendingAppend[], outcomes: Outcome[]) => void>;
  private queue: PendingAppend[] = [];
  private flushScheduled = false;
  private readonly counters: SqliteEventStoreStats = { commits: 0, appends: 0, events: 0 };

  /**
   * @param observer told of each group commit's size
   * @param committed called after each commit, to wake what waits for new events
   */
  constructor(
    private readonly db: Database.Database,
    private readonly observer: EventStoreObserver | null,
    private readonly committed: () => void,
  ) {
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

  stats(): SqliteEventStoreStats {
    return { ...this.counters };
  }

  /** Queues a validated append for the next group commit. */
  enqueue(request: PendingAppend): void {
    this.queue.push(request);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Commits the appends queued so far, now. */
  flush(): void {
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
    this.committed();
  }

  /**
   * Ready means able to write: a read would succeed on a full disk. After a failed commit the
   * log is checkpointed and truncated first, which frees the space a small disk needs to recover.
   */
  probe(): void {
    try {
      if (this.writeFailure !== null) this.db.pragma('wal_checkpoint(TRUNCATE)');
      this.probeWrite.run(new Date().toISOString());
    } catch (error) {
      this.writeFailure = describe(error);
      throw new Error(`${EVENTS_FILE} cannot be written: ${this.writeFailure}`, { cause: error });
    }
    this.writeFailure = null;
  }

  /** Runs inside the group's transaction (or the caller's), in a savepoint of its own. */
  appendOne({ stream, events, expected }: Pick<PendingAppend, 'stream' | 'events' | 'expected'>): Applied {
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
  startChain(): void {
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
}

export function serializeEvent(event: NewEvent): SerializedEvent {
  return {
    id: event.id,
    type: event.type,
    data: JSON.stringify(event.data),
    metadata: JSON.stringify(event.metadata),
  };
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
