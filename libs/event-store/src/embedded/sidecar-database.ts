import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/** Idempotency-Key records (the API's): answers to replay, never restored from a backup. */
export const IDEMPOTENCY_FILE = 'idempotency.db';

/**
 * How a sidecar database writes. `fast`: WAL, without an fsync per write (what it holds is worth
 * less than the write's latency). `durable`: every commit on disk before it returns, its journal's
 * removal too (SQLite's `synchronous = EXTRA` with a rollback journal, deleted at each commit), and
 * deleted rows overwritten with zeros (`secure_delete`), so that nothing deleted lingers in a page,
 * a write-ahead log or a journal under DATA_DIR.
 */
export type SidecarMode = 'fast' | 'durable';

/**
 * A small SQLite database of its own under DATA_DIR (limits, idempotency keys, data keys), shared
 * by every process on the data directory, private from its creation like events.db.
 */
export function openSidecarDatabase(
  dataDir: string,
  file: string,
  mode: SidecarMode = 'fast',
): Database.Database {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, file);
  closeSync(openSync(path, 'a', 0o600));
  const db = new Database(path, { timeout: 10_000 });
  if (mode === 'fast') {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
  } else {
    db.pragma('journal_mode = DELETE');
    db.pragma('synchronous = EXTRA');
    db.pragma('secure_delete = ON');
  }
  return db;
}
