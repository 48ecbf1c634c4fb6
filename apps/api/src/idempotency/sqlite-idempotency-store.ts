import type Database from 'better-sqlite3';
import { IDEMPOTENCY_FILE, openSidecarDatabase } from '@chronicle/event-store';
import {
  Claim,
  IDEMPOTENCY_WINDOW_MS,
  IdempotencyStore,
  KeyRecord,
  takeoverBounds,
} from './idempotency-store';

/**
 * Idempotency-Key records of the embedded default, in `DATA_DIR/idempotency.db`: kept across
 * restarts and shared by every process on the data directory. A claim is one statement (an
 * upsert that takes the key only from a record that no longer holds it) in an immediate
 * transaction, so two processes never both take a key; only a claim that finds the key held
 * reads the record back. Operations share their transaction with those of the same turn.
 */
export class SqliteIdempotencyStore extends IdempotencyStore {
  private db: Database.Database | null = null;
  private commit: ((group: Pending[]) => unknown[]) | null = null;
  private queue: Pending[] = [];

  constructor(private readonly dataDir: string) {
    super();
  }

  claim(claim: Claim): Promise<KeyRecord | null> {
    const { expired, leaseEnded } = takeoverBounds(claim);
    return this.enqueue((statements) => {
      const taken = statements.claim.run(
        claim.scope,
        claim.key,
        claim.fingerprint,
        claim.owner,
        claim.now,
        expired,
        leaseEnded,
      );
      // Not taken: a live record holds the key (the group's transaction keeps it so meanwhile).
      return taken.changes === 1 ? null : (statements.get.get(claim.scope, claim.key) as KeyRecord);
    });
  }

  complete(scope: string, key: string, owner: string, response: string): Promise<void> {
    return this.enqueue((statements) => void statements.complete.run(response, scope, key, owner));
  }

  release(scope: string, key: string, owner: string): Promise<void> {
    return this.enqueue((statements) => void statements.release.run(scope, key, owner));
  }

  trim(scope: string, keep: number): Promise<void> {
    return this.enqueue((statements) => void statements.trim.run(scope, scope, keep - 1));
  }

  prune(now: number): Promise<void> {
    return this.enqueue((statements) => statements.prune(now - IDEMPOTENCY_WINDOW_MS));
  }

  close(): Promise<void> {
    // What was asked before the close is still written.
    this.flush();
    this.db?.close();
    this.db = null;
    this.commit = null;
    return Promise.resolve();
  }

  /**
   * Group commit: the operations asked within one turn of the event loop share one immediate
   * transaction, run at the end of the turn (each settles once it is committed). A request's
   * claim and the answer kept for another then cost one commit between them.
   */
  private enqueue<T>(run: (statements: Operations) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, resolve, reject });
      if (this.queue.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const group = this.queue;
    if (group.length === 0) return;
    this.queue = [];
    let results: unknown[];
    try {
      results = this.open()(group);
    } catch (error) {
      for (const pending of group) pending.reject(error);
      return;
    }
    group.forEach((pending, index) => pending.resolve(results[index]));
  }

  /** Opened on first use: processes that never take a key create nothing. */
  private open(): (group: Pending[]) => unknown[] {
    if (this.commit === null) {
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
      const operations = prepare(db);
      const commit = db.transaction((group: Pending[]) => group.map((pending) => pending.run(operations)));
      this.commit = (group) => commit.immediate(group);
    }
    return this.commit;
  }
}

type Operations = ReturnType<typeof prepare>;

interface Pending {
  run(statements: Operations): unknown;
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

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
 * account with records, then a range of its oldest. Once a minute, in a group's transaction.
 */
function pruneByScope(db: Database.Database): (expired: number) => void {
  const nextScope = db
    .prepare('SELECT scope FROM idempotency WHERE scope > ? ORDER BY scope LIMIT 1')
    .pluck();
  const pruneScope = db.prepare('DELETE FROM idempotency WHERE scope = ? AND started <= ?');
  return (expired) => {
    for (let scope = nextScope.get('') as string | undefined; scope !== undefined;) {
      pruneScope.run(scope, expired);
      scope = nextScope.get(scope) as string | undefined;
    }
  };
}
