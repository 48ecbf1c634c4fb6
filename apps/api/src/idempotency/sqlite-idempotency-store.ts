import type Database from 'better-sqlite3';
import { IDEMPOTENCY_FILE, openSidecarDatabase } from '@chronicle/event-store';
import { Claim, IDEMPOTENCY_WINDOW_MS, IdempotencyStore, isLive, KeyRecord } from './idempotency-store';

interface Row extends KeyRecord {
  owner: string;
}

/**
 * Idempotency-Key records of the embedded default, in `DATA_DIR/idempotency.db`: kept across
 * restarts and shared by every process on the data directory (a claim is one immediate
 * transaction, so two processes never both take a key).
 */
export class SqliteIdempotencyStore extends IdempotencyStore {
  private db: Database.Database | null = null;
  private statements: Statements | null = null;

  constructor(private readonly dataDir: string) {
    super();
  }

  claim(claim: Claim): Promise<KeyRecord | null> {
    // Immediate: the write lock is taken before the read, so no other process claims in between.
    return Promise.resolve(this.open().claim.immediate(claim));
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
    this.open().prune.run(now - IDEMPOTENCY_WINDOW_MS);
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
      db.exec('CREATE INDEX IF NOT EXISTS idempotency_by_start ON idempotency (started)');
      this.db = db;
      this.statements = prepare(db);
    }
    return this.statements;
  }
}

type Statements = ReturnType<typeof prepare>;

function prepare(db: Database.Database) {
  const get = db.prepare(
    'SELECT fingerprint, owner, started, response FROM idempotency WHERE scope = ? AND key = ?',
  );
  const put = db.prepare(
    'INSERT OR REPLACE INTO idempotency (scope, key, fingerprint, owner, started, response) VALUES (?, ?, ?, ?, ?, NULL)',
  );
  return {
    claim: db.transaction((claim: Claim): KeyRecord | null => {
      const held = get.get(claim.scope, claim.key) as Row | undefined;
      if (held !== undefined && isLive(held, claim)) {
        return { fingerprint: held.fingerprint, started: held.started, response: held.response };
      }
      put.run(claim.scope, claim.key, claim.fingerprint, claim.owner, claim.now);
      return null;
    }),
    complete: db.prepare('UPDATE idempotency SET response = ? WHERE scope = ? AND key = ? AND owner = ?'),
    release: db.prepare(
      'DELETE FROM idempotency WHERE scope = ? AND key = ? AND owner = ? AND response IS NULL',
    ),
    trim: db.prepare(
      'DELETE FROM idempotency WHERE scope = ? AND started < ' +
        '(SELECT started FROM idempotency WHERE scope = ? ORDER BY started DESC LIMIT 1 OFFSET ?)',
    ),
    prune: db.prepare('DELETE FROM idempotency WHERE started <= ?'),
  };
}
