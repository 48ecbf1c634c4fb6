import type Database from 'better-sqlite3';
import {
  DataKeyStore,
  DataSubject,
  Erasure,
  SubjectKey,
  SubjectKind,
  subjectName,
} from '../personal-data/data-key-store.port';
import { DataKeyWrapper } from '../personal-data/data-key-wrapper';
import { openSidecarDatabase } from './sidecar-database';

/** The data keys of the embedded default, apart from events.db. */
export const DATA_KEYS_FILE = 'data-keys.db';

interface Row {
  subject: string;
  kind: SubjectKind;
  id: string;
  wrapped: Buffer | null;
  erased_at: string | null;
  /** Epoch milliseconds of the destroy, on rows destroyed since the column exists. */
  destroyed_at?: number | null;
}

/**
 * Data keys of the embedded default, in `DATA_DIR/data-keys.db` (0600), shared by every process on
 * the data directory. Opened `durable`: a key made or destroyed is on disk before the call
 * returns, so a crash neither loses a key that events were written under nor brings back one
 * that was destroyed; and a destroyed key's bytes are overwritten, not left in a free page or a
 * journal. Each key is a row; an erased subject's row keeps only the erasure.
 */
export class SqliteDataKeyStore extends DataKeyStore {
  private db: Database.Database | null = null;
  private statements: Statements | null = null;
  private readonly wrapper: DataKeyWrapper;

  constructor(
    private readonly dataDir: string,
    secret: Uint8Array,
  ) {
    super();
    this.wrapper = new DataKeyWrapper(secret);
  }

  createMany(subjects: readonly DataSubject[]): Promise<Map<string, SubjectKey>> {
    return settled(() => this.open().createMany.immediate(subjects));
  }

  getMany(subjects: readonly DataSubject[]): Promise<Map<string, SubjectKey>> {
    return settled(() => {
      const rows = this.open().getMany.all(JSON.stringify(subjects.map(subjectName))) as Row[];
      return new Map(rows.map((row) => [row.subject, this.keyOf(row)]));
    });
  }

  destroy(erasure: Erasure): Promise<Erasure> {
    return settled(() => this.open().destroy.immediate(erasure));
  }

  erasures(after: string | null, limit: number): Promise<Erasure[]> {
    return settled(() => (this.open().erasures.all(after ?? '', limit) as Row[]).map(erasureOf));
  }

  destroyedSince(since: Date, limit: number): Promise<Erasure[]> {
    return settled(() => (this.open().destroyedSince.all(since.getTime(), limit) as Row[]).map(erasureOf));
  }

  close(): Promise<void> {
    this.db?.close();
    this.db = null;
    this.statements = null;
    return Promise.resolve();
  }

  private keyOf(row: Row): SubjectKey {
    if (row.wrapped === null) return { state: 'erased', erasure: erasureOf(row) };
    return { state: 'active', key: this.wrapper.unwrap(row.subject, row.wrapped) };
  }

  /** Opened on first use: processes that never touch personal data create nothing. */
  private open(): Statements {
    if (this.statements === null) {
      const db = openSidecarDatabase(this.dataDir, DATA_KEYS_FILE, 'durable');
      try {
        db.exec(
          'CREATE TABLE IF NOT EXISTS data_keys (subject TEXT PRIMARY KEY, kind TEXT NOT NULL, id TEXT NOT NULL, ' +
            'wrapped BLOB, erased_at TEXT, CHECK ((wrapped IS NULL) <> (erased_at IS NULL))) WITHOUT ROWID',
        );
        db.exec(
          'CREATE INDEX IF NOT EXISTS data_keys_erased ON data_keys (subject) WHERE erased_at IS NOT NULL',
        );
        // Added after the first release of this file: when each key was destroyed, for destroyedSince().
        db.transaction(() => {
          const columns = db.prepare('PRAGMA table_info(data_keys)').all() as Array<{ name: string }>;
          if (!columns.some((column) => column.name === 'destroyed_at')) {
            db.exec('ALTER TABLE data_keys ADD COLUMN destroyed_at INTEGER');
          }
        }).immediate();
        db.exec(
          'CREATE INDEX IF NOT EXISTS data_keys_destroyed ON data_keys (destroyed_at) WHERE destroyed_at IS NOT NULL',
        );
        db.exec(
          'CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID',
        );
        // The first process records which secret the keys are wrapped under; every later one checks it.
        db.prepare("INSERT OR IGNORE INTO settings (name, value) VALUES ('secret-check', ?)").run(
          this.wrapper.check,
        );
        const { value } = db.prepare("SELECT value FROM settings WHERE name = 'secret-check'").get() as {
          value: string;
        };
        this.wrapper.verify(value, `${this.dataDir}/${DATA_KEYS_FILE}`);
      } catch (error) {
        db.close();
        throw error;
      }
      this.db = db;
      this.statements = prepare(db, this.wrapper);
    }
    return this.statements;
  }
}

type Statements = ReturnType<typeof prepare>;

function prepare(db: Database.Database, wrapper: DataKeyWrapper) {
  const get = db.prepare('SELECT subject, kind, id, wrapped, erased_at FROM data_keys WHERE subject = ?');
  const insert = db.prepare('INSERT INTO data_keys (subject, kind, id, wrapped) VALUES (?, ?, ?, ?)');
  const insertErased = db.prepare(
    'INSERT INTO data_keys (subject, kind, id, wrapped, erased_at, destroyed_at) VALUES (?, ?, ?, NULL, ?, ?)',
  );
  const remove = db.prepare('DELETE FROM data_keys WHERE subject = ?');
  return {
    // Immediate transactions: the write lock is taken before the read, so two processes never
    // both make a subject's key, nor make one while another erases the subject.
    createMany: db.transaction((subjects: readonly DataSubject[]): Map<string, SubjectKey> => {
      const keys = new Map<string, SubjectKey>();
      for (const subject of subjects) {
        const name = subjectName(subject);
        const held = get.get(name) as Row | undefined;
        if (held === undefined) {
          const key = DataKeyWrapper.newKey();
          insert.run(name, subject.kind, subject.id, wrapper.wrap(name, key));
          keys.set(name, { state: 'active', key });
        } else if (held.wrapped === null) {
          keys.set(name, { state: 'erased', erasure: erasureOf(held) });
        } else {
          keys.set(name, { state: 'active', key: wrapper.unwrap(name, held.wrapped) });
        }
      }
      return keys;
    }),
    destroy: db.transaction((erasure: Erasure): Erasure => {
      const { subject } = erasure;
      const name = subjectName(subject);
      const held = get.get(name) as Row | undefined;
      if (held?.wrapped === null) return erasureOf(held);
      // Deleted, then recorded anew: the key's cell is freed (and zeroed), never rewritten in place.
      remove.run(name);
      insertErased.run(name, subject.kind, subject.id, erasure.erasedAt, Date.now());
      return { subject: { kind: subject.kind, id: subject.id }, erasedAt: erasure.erasedAt };
    }),
    getMany: db.prepare(
      'SELECT subject, kind, id, wrapped, erased_at FROM data_keys WHERE subject IN (SELECT value FROM json_each(?))',
    ),
    erasures: db.prepare(
      'SELECT subject, kind, id, wrapped, erased_at FROM data_keys ' +
        'WHERE erased_at IS NOT NULL AND subject > ? ORDER BY subject LIMIT ?',
    ),
    destroyedSince: db.prepare(
      'SELECT subject, kind, id, wrapped, erased_at FROM data_keys ' +
        'WHERE destroyed_at IS NOT NULL AND destroyed_at >= ? ORDER BY destroyed_at LIMIT ?',
    ),
  };
}

/** `work`'s result, or its error as a rejection, as callers of an asynchronous port expect. */
function settled<T>(work: () => T): Promise<T> {
  return new Promise((resolve) => resolve(work()));
}

function erasureOf(row: Row): Erasure {
  return { subject: { kind: row.kind, id: row.id }, erasedAt: row.erased_at! };
}
