import type Database from 'better-sqlite3';
import { BackgroundCheckpoints, IDEMPOTENCY_FILE, openSidecarDatabase } from '@chronicle/event-store';
import { Claim, IDEMPOTENCY_WINDOW_MS, IdempotencyStore, isExpired, KeyRecord } from './idempotency-store';

/**
 * Idempotency-Key records of the embedded default, in `DATA_DIR/idempotency.db`: kept across
 * restarts and shared by every process on the data directory. A claim is one statement (an
 * upsert that takes the key only from an expired record), so it is atomic across processes; only a
 * claim that finds the key held reads the record back. The writes asked for in one turn of the
 * event loop (concurrent requests) share one transaction, one commit: a commit per claim and per
 * answer was most of what a key cost a PATCH (profiled), and each write is still answered only
 * once its commit is done. Its checkpoints run in a worker thread (BackgroundCheckpoints): each
 * key writes pages at random, and the fsyncs of a checkpoint taken by a commit held the API's event
 * loop up.
 */
export class SqliteIdempotencyStore extends IdempotencyStore {
  private db: Database.Database | null = null;
  private statements: Statements | null = null;
  private checkpoints: BackgroundCheckpoints | null = null;
  private queued: Array<Queued<unknown>> = [];

  constructor(private readonly dataDir: string) {
    super();
  }

  claim(claim: Claim): Promise<KeyRecord | null> {
    return this.write((statements) => {
      for (;;) {
        const taken = statements.claim.run(
          claim.scope,
          claim.key,
          claim.fingerprint,
          claim.owner,
          claim.now,
          claim.after,
          claim.now - IDEMPOTENCY_WINDOW_MS,
        );
        if (taken.changes === 1) return null;
        const held = statements.get.get(claim.scope, claim.key) as KeyRecord | undefined;
        // Released (its request failed) or expired between the two statements: claim it again.
        if (held !== undefined && !isExpired(held, claim.now)) return held;
      }
    });
  }

  takeOver(claim: Claim, from: string): Promise<boolean> {
    return this.write(
      (statements) =>
        statements.takeOver.run(
          claim.fingerprint,
          claim.owner,
          claim.now,
          claim.after,
          claim.scope,
          claim.key,
          from,
        ).changes === 1,
    );
  }

  complete(scope: string, key: string, owner: string, response: string): Promise<void> {
    return this.write((statements) => void statements.complete.run(response, scope, key, owner));
  }

  release(scope: string, key: string, owner: string): Promise<void> {
    return this.write((statements) => void statements.release.run(scope, key, owner));
  }

  trim(scope: string, keep: number): Promise<void> {
    return this.write((statements) => void statements.trim.run(scope, scope, keep - 1));
  }

  prune(now: number): Promise<void> {
    // A failure (busy, a full disk) rejects: thrown, it would end the process from the API's timer.
    return new Promise((resolve) => resolve(this.open().prune(now - IDEMPOTENCY_WINDOW_MS)));
  }

  async close(): Promise<void> {
    const checkpoints = this.checkpoints;
    this.checkpoints = null;
    await checkpoints?.stop();
    // Writes still queued are committed first: each was asked for before the close.
    this.commitQueued();
    this.db?.close();
    this.db = null;
    this.statements = null;
  }

  /** Queues `work` for this turn's transaction; answered once that transaction has committed. */
  private write<T>(work: (statements: Statements) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.queued.length === 0) setImmediate(() => this.commitQueued());
      this.queued.push({ work, resolve, reject } as Queued<unknown>);
    });
  }

  private commitQueued(): void {
    const queued = this.queued;
    if (queued.length === 0) return;
    this.queued = [];
    let outcomes: Array<{ value: unknown } | { error: unknown }>;
    try {
      const statements = this.open();
      // One statement failing (its own changes undone by SQLite) fails only its own write.
      outcomes = statements.inTransaction.immediate(queued, statements);
    } catch (error) {
      // The transaction did not commit (busy past the timeout, a full disk): none of them happened.
      for (const { reject } of queued) reject(error);
      return;
    }
    this.checkpoints?.committed();
    queued.forEach(({ resolve, reject }, i) => {
      const outcome = outcomes[i];
      if ('error' in outcome) reject(outcome.error);
      else resolve(outcome.value);
    });
  }

  /** Opened on first use: processes that never take a key create nothing. */
  private open(): Statements {
    if (this.statements === null) {
      // Private from its creation: the answers kept are account data. A record lost to a power cut
      // lets one retry run again.
      const db = openSidecarDatabase(this.dataDir, IDEMPOTENCY_FILE);
      db.exec(CREATE_TABLE);
      addAfterPosition(db);
      keyInRowOrder(db);
      db.exec(KEY_INDEX);
      db.exec('CREATE INDEX IF NOT EXISTS idempotency_by_scope ON idempotency (scope, started)');
      // Every claim wrote a third B-tree for the prune alone; the prune walks by_scope instead.
      db.exec('DROP INDEX IF EXISTS idempotency_by_start');
      this.db = db;
      this.statements = prepare(db);
      this.checkpoints = BackgroundCheckpoints.start(db);
    }
    return this.statements;
  }
}

/**
 * Records in the order their keys were first claimed (a rowid table), found by (scope, key) through
 * a unique index: keys are hashes, so a table ordered by them put every claim, every answer and
 * every trimmed record on a page of its own, and the log and its checkpoints wrote a quarter more
 * per key (measured with /proc/self/io, one account's keys). New claims and their answers now share the last
 * pages, and a trim takes the first ones.
 */
const CREATE_TABLE =
  'CREATE TABLE IF NOT EXISTS idempotency (scope TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, ' +
  'owner TEXT NOT NULL, started INTEGER NOT NULL, response TEXT, after_position TEXT)';

const KEY_INDEX = 'CREATE UNIQUE INDEX IF NOT EXISTS idempotency_key ON idempotency (scope, key)';

/**
 * A database made when the table was ordered by (scope, key) (WITHOUT ROWID) gets the table above,
 * its records copied oldest first. In the write lock: another process may be moving it too.
 */
function keyInRowOrder(db: Database.Database): void {
  const byKey = db.prepare<[], number>(
    "SELECT count(*) FROM sqlite_master WHERE name = 'idempotency' AND sql LIKE '%WITHOUT ROWID%'",
  );
  if (!byKey.pluck().get()) return;
  const columns = 'scope, key, fingerprint, owner, started, response, after_position';
  db.transaction(() => {
    if (!byKey.pluck().get()) return;
    db.exec('ALTER TABLE idempotency RENAME TO idempotency_by_key');
    db.exec(CREATE_TABLE);
    db.exec(
      `INSERT INTO idempotency (${columns}) SELECT ${columns} FROM idempotency_by_key ORDER BY started`,
    );
    db.exec('DROP TABLE idempotency_by_key');
    // In the same commit: a process still running the code before this one claims with ON CONFLICT (scope, key).
    db.exec(KEY_INDEX);
  }).immediate();
}

type Statements = ReturnType<typeof prepare>;

function prepare(db: Database.Database) {
  return {
    claim: db.prepare(
      'INSERT INTO idempotency (scope, key, fingerprint, owner, started, response, after_position) ' +
        'VALUES (?, ?, ?, ?, ?, NULL, ?) ' +
        'ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, owner = excluded.owner, ' +
        'started = excluded.started, response = NULL, after_position = excluded.after_position ' +
        'WHERE started <= ?',
    ),
    get: db.prepare(
      'SELECT fingerprint, started, response, owner, after_position AS after FROM idempotency ' +
        'WHERE scope = ? AND key = ?',
    ),
    takeOver: db.prepare(
      'UPDATE idempotency SET fingerprint = ?, owner = ?, started = ?, after_position = ? ' +
        'WHERE scope = ? AND key = ? AND owner = ? AND response IS NULL',
    ),
    complete: db.prepare('UPDATE idempotency SET response = ? WHERE scope = ? AND key = ? AND owner = ?'),
    release: db.prepare(
      'DELETE FROM idempotency WHERE scope = ? AND key = ? AND owner = ? AND response IS NULL',
    ),
    trim: db.prepare(
      'DELETE FROM idempotency WHERE scope = ? AND started < ' +
        '(SELECT started FROM idempotency WHERE scope = ? ORDER BY started DESC LIMIT 1 OFFSET ?)',
    ),
    prune: pruneByScope(db),
    inTransaction: db.transaction((queued: ReadonlyArray<Queued<unknown>>, statements: Statements) =>
      queued.map(({ work }) => {
        try {
          return { value: work(statements) };
        } catch (error) {
          // An error SQLite answers by rolling the whole transaction back (a full disk, I/O):
          // nothing of the batch is kept, so all of it fails.
          if (!db.inTransaction) throw error;
          return { error };
        }
      }),
    ),
  };
}

/** A write waiting for its turn's transaction. */
interface Queued<T> {
  work: (statements: Statements) => T;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

/**
 * A database made before records kept the log's end (KeyRecord.after) gets the column; its records
 * read as from the log's start. In the write lock: another process may be adding it too.
 */
function addAfterPosition(db: Database.Database): void {
  const hasColumn = db.prepare<[], number>(
    "SELECT count(*) FROM pragma_table_info('idempotency') WHERE name = 'after_position'",
  );
  if (hasColumn.pluck().get()) return;
  db.transaction(() => {
    if (!hasColumn.pluck().get()) db.exec('ALTER TABLE idempotency ADD COLUMN after_position TEXT');
  }).immediate();
}

/**
 * Deletes the records expired by `expired`, account by account through by_scope: a seek to each
 * account with records, then a range of its oldest. One transaction, once a minute.
 */
function pruneByScope(db: Database.Database): (expired: number) => void {
  const nextScope = db
    .prepare('SELECT scope FROM idempotency WHERE scope > ? ORDER BY scope LIMIT 1')
    .pluck();
  const pruneScope = db.prepare('DELETE FROM idempotency WHERE scope = ? AND started <= ?');
  const prune = db.transaction((expired: number) => {
    for (let scope = nextScope.get('') as string | undefined; scope !== undefined;) {
      pruneScope.run(scope, expired);
      scope = nextScope.get(scope) as string | undefined;
    }
  });
  // Immediate: the write lock first, so another process's write cannot void the read (SQLITE_BUSY).
  return (expired) => prune.immediate(expired);
}
