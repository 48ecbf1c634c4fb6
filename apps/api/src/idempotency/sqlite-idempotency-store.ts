import type Database from 'better-sqlite3';
import { IDEMPOTENCY_FILE, openSidecarDatabase } from '@chronicle/event-store';
import { Claim, IDEMPOTENCY_WINDOW_MS, IdempotencyStore, isExpired, KeyRecord } from './idempotency-store';

/**
 * Idempotency-Key records of the embedded default, in `DATA_DIR/idempotency.db`: kept across
 * restarts and shared by every process on the data directory. A claim is one statement (an
 * upsert that takes the key only from an expired record), so it is atomic across processes and
 * costs one commit; only a claim that finds the key held reads the record back.
 */
export class SqliteIdempotencyStore extends IdempotencyStore {
  private db: Database.Database | null = null;
  private statements: Statements | null = null;

  constructor(private readonly dataDir: string) {
    super();
  }

  claim(claim: Claim): Promise<KeyRecord | null> {
    const statements = this.open();
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
      if (taken.changes === 1) return Promise.resolve(null);
      const held = statements.get.get(claim.scope, claim.key) as KeyRecord | undefined;
      // Released (its request failed) or expired between the two statements: claim it again.
      if (held !== undefined && !isExpired(held, claim.now)) return Promise.resolve(held);
    }
  }

  takeOver(claim: Claim, from: string): Promise<boolean> {
    const taken = this.open().takeOver.run(
      claim.fingerprint,
      claim.owner,
      claim.now,
      claim.after,
      claim.scope,
      claim.key,
      from,
    );
    return Promise.resolve(taken.changes === 1);
  }

  complete(scope: string, key: string, owner: string, response: string): Promise<void> {
    this.open().complete.run(response, scope, key, owner);
    return Promise.resolve();
  }

  release(scope: string, key: string, owner: string): Promise<void> {
    this.open().release.run(scope, key, owner);
    return Promise.resolve();
  }

  trim(scope: string, keep: number): Promise<void> {
    this.open().trim.run(scope, scope, keep - 1);
    return Promise.resolve();
  }

  prune(now: number): Promise<void> {
    this.open().prune(now - IDEMPOTENCY_WINDOW_MS);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.db?.close();
    this.db = null;
    this.statements = null;
    return Promise.resolve();
  }

  /** Opened on first use: processes that never take a key create nothing. */
  private open(): Statements {
    if (this.statements === null) {
      // Private from its creation: the answers kept are account data. A record lost to a power cut
      // lets one retry run again.
      const db = openSidecarDatabase(this.dataDir, IDEMPOTENCY_FILE);
      db.exec(
        'CREATE TABLE IF NOT EXISTS idempotency (scope TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, ' +
          'owner TEXT NOT NULL, started INTEGER NOT NULL, response TEXT, after_position TEXT, ' +
          'PRIMARY KEY (scope, key)) WITHOUT ROWID',
      );
      addAfterPosition(db);
      db.exec('CREATE INDEX IF NOT EXISTS idempotency_by_scope ON idempotency (scope, started)');
      // Every claim wrote a third B-tree for the prune alone; the prune walks by_scope instead.
      db.exec('DROP INDEX IF EXISTS idempotency_by_start');
      this.db = db;
      this.statements = prepare(db);
    }
    return this.statements;
  }
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
  };
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
