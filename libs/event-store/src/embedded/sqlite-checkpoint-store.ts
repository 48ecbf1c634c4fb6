import Database from 'better-sqlite3';
import { closeSync, openSync } from 'node:fs';
import { CheckpointStore, ParkedMessage } from '../processing/checkpoint-store.port';
import { comparePositions, Position } from '../position';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS processor_checkpoints (
    processor TEXT PRIMARY KEY,
    commit_position TEXT NOT NULL,
    prepare_position TEXT NOT NULL
  ) STRICT;
  CREATE TABLE IF NOT EXISTS parked_messages (
    processor TEXT NOT NULL,
    event_id TEXT NOT NULL,
    stream TEXT NOT NULL,
    revision INTEGER NOT NULL,
    type TEXT NOT NULL,
    commit_position TEXT NOT NULL,
    prepare_position TEXT NOT NULL,
    reason TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    parked_at TEXT NOT NULL,
    PRIMARY KEY (processor, event_id)
  ) STRICT;
  CREATE TABLE IF NOT EXISTS processor_state (
    processor TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (processor, key)
  ) STRICT, WITHOUT ROWID;
`;

/** SQLite's name for a database that lives and dies with its connection (for tests). */
const MEMORY = ':memory:';

type ParkedRow = [string, string, string, number, string, string, string, string, number, string];
const PARKED_COLUMNS =
  'processor, event_id, stream, revision, type, commit_position, prepare_position, reason, attempts, parked_at';

/**
 * Checkpoints and parked messages in a SQLite database: the embedded event store's own file on the
 * default, so they are as durable as the events and go with them in a backup.
 */
export class SqliteCheckpointStore extends CheckpointStore {
  private readonly upsertCheckpoint: Database.Statement<[string, string, string]>;
  private readonly selectCheckpoint: Database.Statement<[string], [string, string]>;
  private readonly upsertParked: Database.Statement<ParkedRow>;
  private readonly selectParked: Database.Statement<[string | null, string | null], ParkedRow>;
  private readonly deleteParked: Database.Statement<[string, string]>;
  private readonly selectState: Database.Statement<[string], [string, string]>;
  private readonly upsertState: Database.Statement<[string, string, string]>;
  private readonly deleteState: Database.Statement<[string, string]>;
  private readonly storeStateWithCheckpoint: Database.Transaction<
    (processor: string, position: Position, changes: ReadonlyMap<string, unknown>) => void
  >;

  private constructor(private readonly db: Database.Database) {
    super();
    this.upsertCheckpoint = db.prepare(
      'INSERT INTO processor_checkpoints (processor, commit_position, prepare_position) VALUES (?, ?, ?) ' +
        'ON CONFLICT (processor) DO UPDATE SET commit_position = excluded.commit_position, ' +
        'prepare_position = excluded.prepare_position',
    );
    this.selectCheckpoint = db.prepare<[string], [string, string]>(
      'SELECT commit_position, prepare_position FROM processor_checkpoints WHERE processor = ?',
    );
    this.selectCheckpoint.raw();
    this.upsertParked = db.prepare(
      `INSERT OR REPLACE INTO parked_messages (${PARKED_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    // Positions are decimal text: ordered by length, then by text, they sort as numbers.
    this.selectParked = db.prepare<[string | null, string | null], ParkedRow>(
      `SELECT ${PARKED_COLUMNS} FROM parked_messages WHERE ? IS NULL OR processor = ? ` +
        'ORDER BY length(commit_position), commit_position, processor',
    );
    this.selectParked.raw();
    this.deleteParked = db.prepare('DELETE FROM parked_messages WHERE processor = ? AND event_id = ?');
    this.selectState = db.prepare<[string], [string, string]>(
      'SELECT key, value FROM processor_state WHERE processor = ?',
    );
    this.selectState.raw();
    this.upsertState = db.prepare(
      'INSERT INTO processor_state (processor, key, value) VALUES (?, ?, ?) ' +
        'ON CONFLICT (processor, key) DO UPDATE SET value = excluded.value',
    );
    this.deleteState = db.prepare('DELETE FROM processor_state WHERE processor = ? AND key = ?');
    this.storeStateWithCheckpoint = db.transaction(
      (processor: string, position: Position, changes: ReadonlyMap<string, unknown>) => {
        // Another process (sharing DATA_DIR) stored a later state: it holds every change up to here.
        const stored = this.selectCheckpoint.get(processor);
        if (
          stored &&
          comparePositions(position, { commit: BigInt(stored[0]), prepare: BigInt(stored[1]) }) < 0
        ) {
          return;
        }
        for (const [key, value] of changes) {
          if (value === null) this.deleteState.run(processor, key);
          else this.upsertState.run(processor, key, JSON.stringify(value));
        }
        this.upsertCheckpoint.run(processor, position.commit.toString(), position.prepare.toString());
      },
    );
  }

  reset(processor: string): Promise<void> {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM processor_state WHERE processor = ?').run(processor);
      this.db.prepare('DELETE FROM processor_checkpoints WHERE processor = ?').run(processor);
    })();
    return Promise.resolve();
  }

  /** Opens `file` (the embedded store's events.db, or a file of its own), creating the tables if needed. */
  static open(file: string, options: { busyTimeoutMs?: number } = {}): SqliteCheckpointStore {
    // Private from its creation, as the event store's own file is.
    if (file !== MEMORY) closeSync(openSync(file, 'a', 0o600));
    const db = new Database(file, { timeout: options.busyTimeoutMs ?? 10_000 });
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.exec(SCHEMA);
      return new SqliteCheckpointStore(db);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  load(processor: string): Promise<Position | null> {
    return settle(() => {
      const row = this.selectCheckpoint.get(processor);
      return row ? { commit: BigInt(row[0]), prepare: BigInt(row[1]) } : null;
    });
  }

  store(processor: string, position: Position): Promise<void> {
    return settle(() => {
      this.upsertCheckpoint.run(processor, position.commit.toString(), position.prepare.toString());
    });
  }

  loadState(processor: string): Promise<Map<string, unknown>> {
    return settle(
      () =>
        new Map(this.selectState.all(processor).map(([key, value]) => [key, JSON.parse(value) as unknown])),
    );
  }

  storeState(processor: string, position: Position, changes: ReadonlyMap<string, unknown>): Promise<void> {
    // BEGIN IMMEDIATE: it reads the stored checkpoint, then writes. A deferred transaction would take
    // its read snapshot first, and its write would then fail at once (SQLITE_BUSY, no busy wait)
    // whenever another connection (the saga worker, another process) was writing meanwhile.
    return settle(() => this.storeStateWithCheckpoint.immediate(processor, position, changes));
  }

  park(message: ParkedMessage): Promise<void> {
    return settle(() => {
      this.upsertParked.run(
        message.processor,
        message.eventId,
        message.stream,
        message.revision,
        message.type,
        message.position.commit.toString(),
        message.position.prepare.toString(),
        message.reason,
        message.attempts,
        message.parkedAt,
      );
    });
  }

  parked(processor?: string): Promise<ParkedMessage[]> {
    return settle(() =>
      this.selectParked.all(processor ?? null, processor ?? null).map((row) => ({
        processor: row[0],
        eventId: row[1],
        stream: row[2],
        revision: row[3],
        type: row[4],
        position: { commit: BigInt(row[5]), prepare: BigInt(row[6]) },
        reason: row[7],
        attempts: row[8],
        parkedAt: row[9],
      })),
    );
  }

  unpark(processor: string, eventId: string): Promise<boolean> {
    return settle(() => this.deleteParked.run(processor, eventId).changes > 0);
  }

  close(): Promise<void> {
    if (this.db.open) this.db.close();
    return Promise.resolve();
  }
}

/** Runs synchronous work behind the async port: a throw becomes a rejection. */
function settle<T>(work: () => T): Promise<T> {
  return new Promise<T>((resolve) => resolve(work()));
}
