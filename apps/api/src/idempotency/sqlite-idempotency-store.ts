import type Database from 'better-sqlite3';
import { IDEMPOTENCY_FILE, openSidecarDatabase } from '@chronicle/event-store';
import {
  Claim,
  IDEMPOTENCY_WINDOW_MS,
  IdempotencyStore,
  isLive,
  KeyRecord,
  takeoverBounds,
} from './idempotency-store';

/**
 * Idempotency-Key records of the embedded default, in `DATA_DIR/idempotency.db`: kept across
 * restarts and shared by every process on the data directory. A claim is one statement (an
 * upsert that takes the key only from a record that no longer holds it), so it is atomic across
 * processes and costs one commit; only a claim that finds the key held reads the record back.
 */
export class SqliteIdempotencyStore extends IdempotencyStore {
  private db: Database.Database | null = null;
  private statements: Statements | null = null;

  constructor(private readonly dataDir: string) {
    super();
  }

  claim(claim: Claim): Promise<KeyRecord | null> {
    const statements = this.open();
    const { expired, leaseEnded } = takeoverBounds(claim);
    for (;;) {
      const taken = statements.claim.run(
        claim.scope,
        claim.key,
        claim.fingerprint,
        claim.owner,
        claim.now,
        expired,
        leaseEnded,
      );
      if (taken.changes === 1) return Promise.resolve(null);
      const held = statements.get.get(claim.scope, claim.key) as KeyRecord | undefined;
      // Released between the two statements (its request failed): claim it again.
      if (held !== undefined && isLive(held, claim)) return Promise.resolve(held);
    }
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
          'owner TEXT NOT NULL, started INTEGER NOT NULL, response TEXT, PRIMARY KEY (scope, key)) WITHOUT ROWID',
      );
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
      'INSERT INTO idempotency (scope, key, fingerprint, owner, started, response) VALUES (?, ?, ?, ?, ?, NULL) ' +
        'ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, owner = excluded.owner, ' +
        'started = excluded.started, response = NULL ' +
        'WHERE started <= ? OR (response IS NULL AND started <= ?)',
    ),
    get: db.prepare('SELECT fingerprint, started, response FROM idempotency WHERE scope = ? AND key = ?'),
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
