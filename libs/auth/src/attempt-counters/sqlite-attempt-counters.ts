import type Database from 'better-sqlite3';
import { AttemptCounters, LIMIT_WINDOW_MS } from '@chronicle/application';
import { openSidecarDatabase } from '@chronicle/event-store';

export const LIMITS_FILE = 'limits.db';

/**
 * Attempt counters of the embedded default, in `DATA_DIR/limits.db`: kept across restarts and
 * shared by every process on the data directory. A row per key and window; rows of past windows
 * are deleted as the windows turn.
 */
export class SqliteAttemptCounters extends AttemptCounters {
  private db: Database.Database | null = null;
  private statements: {
    add: Database.Statement;
    remove: Database.Statement;
    prune: Database.Statement;
    unmark: Database.Statement;
    mark: Database.Statement;
    marked: Database.Statement;
  } | null = null;
  /** The window whose predecessors were last pruned. */
  private prunedBefore = 0;

  constructor(private readonly dataDir: string) {
    super();
  }

  // Rows are dropped by window, not by their expiry: windows turn at the same instants everywhere.
  add(key: string, window: number, _expiresAt?: number): Promise<number> {
    const statements = this.open();
    if (window > this.prunedBefore) {
      statements.prune.run(window);
      this.prunedBefore = window;
    }
    const row = statements.add.get(key, window) as { count: number };
    return Promise.resolve(row.count);
  }

  remove(key: string, window: number): Promise<void> {
    this.open().remove.run(key, window);
    return Promise.resolve();
  }

  // A mark is a row of the window it expires in, so the pruning of past windows drops it in time.
  mark(key: string, expiresAt: number): Promise<void> {
    const statements = this.open();
    this.db!.transaction(() => {
      statements.unmark.run(key);
      statements.mark.run(key, Math.floor(expiresAt / LIMIT_WINDOW_MS));
    })();
    return Promise.resolve();
  }

  marked(key: string, now: number): Promise<boolean> {
    return Promise.resolve(this.open().marked.get(key, Math.floor(now / LIMIT_WINDOW_MS)) !== undefined);
  }

  close(): Promise<void> {
    this.db?.close();
    this.db = null;
    this.statements = null;
    return Promise.resolve();
  }

  /** Opened on first use: processes that never count (the CLI, the projector) create nothing. */
  private open() {
    if (this.statements) return this.statements;
    // Private from its creation: the keys name clients and hashed addresses. A count lost to a
    // power cut only lets a few more attempts through.
    const db = openSidecarDatabase(this.dataDir, LIMITS_FILE);
    db.exec(
      'CREATE TABLE IF NOT EXISTS attempts (key TEXT NOT NULL, window INTEGER NOT NULL, count INTEGER NOT NULL, ' +
        'PRIMARY KEY (key, window)) WITHOUT ROWID',
    );
    db.exec('CREATE INDEX IF NOT EXISTS attempts_by_window ON attempts (window)');
    this.db = db;
    this.statements = {
      add: db.prepare(
        'INSERT INTO attempts (key, window, count) VALUES (?, ?, 1) ' +
          'ON CONFLICT (key, window) DO UPDATE SET count = count + 1 RETURNING count',
      ),
      remove: db.prepare('UPDATE attempts SET count = count - 1 WHERE key = ? AND window = ? AND count > 0'),
      prune: db.prepare('DELETE FROM attempts WHERE window < ?'),
      unmark: db.prepare('DELETE FROM attempts WHERE key = ?'),
      mark: db.prepare('INSERT INTO attempts (key, window, count) VALUES (?, ?, 1)'),
      marked: db.prepare('SELECT 1 FROM attempts WHERE key = ? AND window >= ?'),
    };
    return this.statements;
  }
}
