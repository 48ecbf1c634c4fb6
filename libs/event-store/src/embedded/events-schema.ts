import type Database from 'better-sqlite3';
import { chainHash, GENESIS_HASH } from '../integrity/history-chain';

/**
 * 1: events with position, id, stream, revision, type, data and metadata.
 * 2: each event's recorded time and chained hash; actor and correlation id indexed for the audit;
 *    UPDATE and DELETE refused by triggers.
 */
export const SCHEMA_VERSION = 2;

/** The event store's file under DATA_DIR. */
export const EVENTS_FILE = 'events.db';

const SUPPORT_TABLES = `
  CREATE TABLE IF NOT EXISTS store_identity (id INTEGER PRIMARY KEY CHECK (id = 1), store_id TEXT NOT NULL) STRICT;
  CREATE TABLE IF NOT EXISTS write_probe (id INTEGER PRIMARY KEY CHECK (id = 1), probed_at TEXT NOT NULL) STRICT;
`;

// No AUTOINCREMENT: a new rowid is max + 1, so rows of a rolled-back savepoint leave no gap.
// The generated columns cost nothing to store; their indexes make one actor's or one
// correlation's events one indexed query. Event and correlation ids sort by time (timeOrderedId),
// so their indexes grow at the end instead of dirtying a random page per append.
const EVENTS_TABLE = `
  CREATE TABLE events (
    position INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    stream TEXT NOT NULL,
    revision INTEGER NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    metadata TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    hash TEXT NOT NULL,
    actor TEXT GENERATED ALWAYS AS (metadata ->> '$.actor') VIRTUAL,
    correlation_id TEXT GENERATED ALWAYS AS (metadata ->> '$.correlationId') VIRTUAL,
    UNIQUE (stream, revision)
  ) STRICT;
`;

const FROM_VERSION_1 = `
  ALTER TABLE events ADD COLUMN recorded_at TEXT NOT NULL DEFAULT '';
  ALTER TABLE events ADD COLUMN hash TEXT NOT NULL DEFAULT '';
  ALTER TABLE events ADD COLUMN actor TEXT GENERATED ALWAYS AS (metadata ->> '$.actor') VIRTUAL;
  ALTER TABLE events ADD COLUMN correlation_id TEXT GENERATED ALWAYS AS (metadata ->> '$.correlationId') VIRTUAL;
`;

/** Dropped only by `history protect`, inside the transaction that rewrites and restores it. */
export const NO_UPDATE_TRIGGER = `CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'events are append-only: an event is never changed'); END;`;

// The triggers keep honest mistakes and careless tools from rewriting history; someone who drops
// them first is what the hash chain is for.
const VERSION_2 = `
  CREATE INDEX IF NOT EXISTS events_recorded_at ON events (recorded_at);
  CREATE INDEX IF NOT EXISTS events_actor ON events (actor);
  CREATE INDEX IF NOT EXISTS events_correlation_id ON events (correlation_id);
  ${NO_UPDATE_TRIGGER}
  CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'events are append-only: an event is never deleted'); END;
  PRAGMA user_version = ${SCHEMA_VERSION};
`;

/**
 * Creates the schema, or brings a version 1 store to version 2 in one transaction: every event
 * gets a recorded time (its occurredAt, raised where needed so that it never decreases with
 * position) and its hash, chained in position order. The chain then covers those events as they
 * were found: it proves nothing about what happened to them before the migration.
 */
export function prepareSchema(db: Database.Database, file: string): void {
  db.exec(SUPPORT_TABLES);
  // The usual case, without taking the write lock; the newer-version refusal is checked below too.
  if ((db.pragma('user_version', { simple: true }) as number) === SCHEMA_VERSION) return;
  db.transaction(() => {
    // Read again inside the write lock: another process may have migrated meanwhile.
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new Error(`${file} has schema version ${version}; this build knows ${SCHEMA_VERSION}`);
    }
    if (version === SCHEMA_VERSION) return;
    const exists = db
      .prepare<[], number>("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'events'")
      .pluck()
      .get();
    if (exists) {
      db.exec(FROM_VERSION_1);
      chainExistingEvents(db);
    } else {
      db.exec(EVENTS_TABLE);
    }
    db.exec(VERSION_2);
  }).immediate();
}

const MIGRATION_BATCH = 5_000;

function chainExistingEvents(db: Database.Database): void {
  const select = db
    .prepare<[number, number], [number, string, string, number, string, string, string]>(
      'SELECT position, id, stream, revision, type, data, metadata FROM events WHERE position > ? ORDER BY position LIMIT ?',
    )
    .raw();
  const update = db.prepare<[string, string, number]>(
    'UPDATE events SET recorded_at = ?, hash = ? WHERE position = ?',
  );
  let previous = GENESIS_HASH;
  let recordedAt = new Date(0).toISOString();
  let after = 0;
  for (;;) {
    const rows = select.all(after, MIGRATION_BATCH);
    for (const [position, id, stream, revision, type, data, metadata] of rows) {
      const occurredAt = occurredAtOf(metadata);
      if (occurredAt !== null && occurredAt > recordedAt) recordedAt = occurredAt;
      const link = { position: String(position), id, stream, revision, type, data, metadata, recordedAt };
      previous = chainHash('log', link, previous);
      update.run(recordedAt, previous, position);
      after = position;
    }
    if (rows.length < MIGRATION_BATCH) return;
  }
}

/** The writer's occurredAt as RFC 3339 UTC with milliseconds, or null when it is none. */
function occurredAtOf(metadata: string): string | null {
  try {
    const { occurredAt } = JSON.parse(metadata) as { occurredAt?: unknown };
    const time = typeof occurredAt === 'string' ? Date.parse(occurredAt) : Number.NaN;
    return Number.isNaN(time) ? null : new Date(time).toISOString();
  } catch {
    return null;
  }
}
