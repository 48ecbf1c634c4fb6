import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/** Idempotency-Key records (the API's): answers to replay, never restored from a backup. */
export const IDEMPOTENCY_FILE = 'idempotency.db';

/**
 * A small SQLite database of its own under DATA_DIR (limits, idempotency keys), shared by every
 * process on the data directory: private from its creation like events.db, in WAL mode, and
 * without an fsync per write (what it holds is worth less than the write's latency).
 */
export function openSidecarDatabase(dataDir: string, file: string): Database.Database {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, file);
  closeSync(openSync(path, 'a', 0o600));
  const db = new Database(path, { timeout: 10_000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  return db;
}
