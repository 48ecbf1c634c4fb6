import Database from 'better-sqlite3';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { syncFile } from '@chronicle/config';
import { newEvent } from '../new-event.spec-helper';
import { BackupCheckError, checkDatabase, copyLiveDatabase, summarizeEventStore } from './sqlite-backup';
import { EVENTS_FILE } from './events-schema';
import { SqliteEventStore } from './sqlite-event-store';
import { readStoreId } from './sqlite-store-identity';

/** How many descriptors this process holds on `file` (Linux's /proc). */
function handlesOn(file: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false; // Closed meanwhile (the directory's own descriptor).
    }
  }).length;
}

describe('SQLite backup checks', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sqlite-backup-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('copies a store that is open and being written, and summarizes the copy', async () => {
    const store = SqliteEventStore.open(dir);
    await store.append('copied-1', [newEvent(), newEvent()], 'no_stream');
    const copy = join(dir, 'copy.db');

    copyLiveDatabase(join(dir, EVENTS_FILE), copy);
    await store.append('copied-1', [newEvent()], 1);
    await store.close();

    expect(() => checkDatabase(copy)).not.toThrow();
    expect(summarizeEventStore(copy)).toEqual({ storeId: readStoreId(dir), position: '2', events: 2 });
  });

  it('leaves no file open: neither the source, nor a copy it checked, summarized or synced', async () => {
    const source = join(dir, EVENTS_FILE);
    const store = SqliteEventStore.open(dir);
    await store.append('copied-1', [newEvent()], 'no_stream');
    const copy = join(dir, 'copy.db');
    const damaged = join(dir, 'damaged.db');
    writeFileSync(damaged, 'not a database, but long enough to have a header of sorts. '.repeat(20));
    copyLiveDatabase(source, copy);
    // SQLite defers closing a descriptor while another connection of the process locks the file.
    await store.close();
    expect(handlesOn(source)).toBe(0);
    checkDatabase(copy);
    summarizeEventStore(copy);
    expect(() => checkDatabase(damaged)).toThrow(BackupCheckError);
    syncFile(copy);
    expect([handlesOn(copy), handlesOn(damaged)]).toEqual([0, 0]);
  });

  it('summarizes a store with no events', async () => {
    await SqliteEventStore.open(dir).close();
    expect(summarizeEventStore(join(dir, EVENTS_FILE))).toEqual({
      storeId: readStoreId(dir),
      position: null,
      events: 0,
    });
  });

  it('says why a file is not a sound event store', () => {
    const missing = join(dir, 'missing.db');
    const text = join(dir, 'text.db');
    writeFileSync(text, 'not a database, but long enough to have a header of sorts. '.repeat(20));
    const other = join(dir, 'other.db');
    const db = new Database(other);
    db.exec('CREATE TABLE notes (text TEXT)');
    db.close();
    const anonymous = join(dir, 'anonymous.db');
    const withoutId = new Database(anonymous);
    withoutId.exec('CREATE TABLE store_identity (id INTEGER PRIMARY KEY, store_id TEXT NOT NULL)');
    withoutId.close();

    const failure = (check: () => unknown) => {
      try {
        check();
      } catch (error) {
        expect(error).toBeInstanceOf(BackupCheckError);
        expect((error as Error).name).toBe('BackupCheckError');
        return (error as Error).message;
      }
      throw new Error('no failure');
    };
    expect(failure(() => checkDatabase(missing))).toBe(
      `${missing}: cannot be opened as missing.db: unable to open database file`,
    );
    expect(failure(() => checkDatabase(text))).toBe(
      `${text}: SQLite's integrity check failed: file is not a database`,
    );
    expect(failure(() => summarizeEventStore(other))).toBe(
      `${other}: is not an event store: no such table: store_identity`,
    );
    expect(failure(() => summarizeEventStore(anonymous))).toBe(`${anonymous}: records no store identity`);
  });

  it('names the first three problems of a damaged file, not all of them', () => {
    const damaged = join(dir, 'damaged.db');
    const db = new Database(damaged);
    db.exec('CREATE TABLE t (a INTEGER, b TEXT); CREATE INDEX i ON t (a)');
    for (let row = 1; row <= 6; row++) db.prepare('INSERT INTO t VALUES (?, ?)').run(row, `b${row}`);
    // The index now claims another column than the one it holds: each row is "missing" from it.
    db.unsafeMode(true);
    db.pragma('writable_schema = ON');
    db.prepare("UPDATE sqlite_master SET sql = 'CREATE INDEX i ON t (b)' WHERE name = 'i'").run();
    db.close();

    expect(() => checkDatabase(damaged)).toThrow(
      new BackupCheckError(
        damaged,
        "SQLite's integrity check failed: row 1 missing from index i; row 2 missing from index i; " +
          'row 3 missing from index i',
      ),
    );
  });

  it('copies only a database that exists, creating none in its place', () => {
    const missing = join(dir, 'missing.db');
    expect(() => copyLiveDatabase(missing, join(dir, 'copy.db'))).toThrow(/unable to open database file/);
    expect(existsSync(missing)).toBe(false);
    expect(existsSync(join(dir, 'copy.db'))).toBe(false);
  });

  /**
   * A database left as a crash leaves it: committed rows only in its write-ahead log, which the
   * next connection to close last would write back into the file and delete.
   */
  function crashedInWal(): { file: string; wal: Buffer; main: Buffer } {
    const writer = new Database(join(dir, 'live.db'));
    writer.pragma('journal_mode = WAL');
    writer.exec('CREATE TABLE t (v TEXT)');
    writer.prepare('INSERT INTO t (v) VALUES (?)').run('committed');
    const file = join(dir, 'crashed.db');
    copyFileSync(join(dir, 'live.db'), file);
    copyFileSync(join(dir, 'live.db-wal'), `${file}-wal`);
    writer.close();
    return { file, wal: readFileSync(`${file}-wal`), main: readFileSync(file) };
  }

  it('copies and checks a database read-only: its write-ahead log is read, never written back', () => {
    const crashed = crashedInWal();
    const copy = join(dir, 'copy.db');
    copyLiveDatabase(crashed.file, copy);
    checkDatabase(crashed.file);
    // The copy has what only the log held, and the source is as it was: log and file untouched.
    const copied = new Database(copy, { readonly: true });
    expect(copied.prepare('SELECT v FROM t').pluck().all()).toEqual(['committed']);
    copied.close();
    expect(readFileSync(`${crashed.file}-wal`)).toEqual(crashed.wal);
    expect(readFileSync(crashed.file)).toEqual(crashed.main);
  });
});
