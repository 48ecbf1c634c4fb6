import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IDEMPOTENCY_FILE, openSidecarDatabase } from '@chronicle/event-store';
import { SqliteIdempotencyStore } from './sqlite-idempotency-store';

describe('SqliteIdempotencyStore', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sqlite-idempotency-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('opens a database made with the by_start index and without after_position: records kept, the index dropped', async () => {
    const old = openSidecarDatabase(dir, IDEMPOTENCY_FILE);
    old.exec(
      'CREATE TABLE idempotency (scope TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, ' +
        'owner TEXT NOT NULL, started INTEGER NOT NULL, response TEXT, PRIMARY KEY (scope, key)) WITHOUT ROWID',
    );
    old.exec('CREATE INDEX idempotency_by_scope ON idempotency (scope, started)');
    old.exec('CREATE INDEX idempotency_by_start ON idempotency (started)');
    old
      .prepare('INSERT INTO idempotency VALUES (?, ?, ?, ?, ?, ?)')
      .run('account-1', 'k', 'fp', 'a', 1_000, 'answer');
    old.close();

    const store = new SqliteIdempotencyStore(dir);
    const claim = {
      scope: 'account-1',
      key: 'k',
      fingerprint: 'fp',
      owner: 'b',
      after: '7',
      now: 2_000,
    };
    // Kept from before the log's end was: read as from the log's start.
    expect(await store.claim(claim)).toEqual({
      fingerprint: 'fp',
      started: 1_000,
      response: 'answer',
      owner: 'a',
      after: null,
    });
    await store.close();

    const reopened = openSidecarDatabase(dir, IDEMPOTENCY_FILE);
    const indexes = reopened
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'idempotency' ORDER BY name",
      )
      .pluck()
      .all();
    const table = reopened.prepare("SELECT sql FROM sqlite_master WHERE name = 'idempotency'").pluck().get();
    reopened.close();
    expect(indexes).toEqual(['idempotency_by_scope', 'idempotency_key']);
    // Ordered by when keys were first claimed now, no longer by key.
    expect(table).not.toMatch(/WITHOUT ROWID/);
  });

  it('moves a table ordered by key to one in claim order, records kept, under a process still claiming the old way', async () => {
    const old = openSidecarDatabase(dir, IDEMPOTENCY_FILE);
    old.exec(
      'CREATE TABLE idempotency (scope TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, ' +
        'owner TEXT NOT NULL, started INTEGER NOT NULL, response TEXT, after_position TEXT, ' +
        'PRIMARY KEY (scope, key)) WITHOUT ROWID',
    );
    const insert = old.prepare('INSERT INTO idempotency VALUES (?, ?, ?, ?, ?, ?, ?)');
    insert.run('account-1', 'z', 'fp-z', 'a', 1_000, 'first', null);
    insert.run('account-1', 'a', 'fp-a', 'b', 2_000, null, '7');
    // The claim of the code before, prepared before the move: it needs (scope, key) unique.
    const oldClaim = old.prepare(
      'INSERT INTO idempotency (scope, key, fingerprint, owner, started, response, after_position) ' +
        'VALUES (?, ?, ?, ?, ?, NULL, NULL) ON CONFLICT (scope, key) DO NOTHING',
    );

    const store = new SqliteIdempotencyStore(dir);
    const claim = (key: string) => ({
      scope: 'account-1',
      key,
      fingerprint: 'x',
      owner: 'c',
      after: null,
      now: 3_000,
    });
    expect(await store.claim(claim('z'))).toMatchObject({ fingerprint: 'fp-z', response: 'first' });
    expect(await store.claim(claim('a'))).toMatchObject({ fingerprint: 'fp-a', owner: 'b', after: '7' });
    expect(oldClaim.run('account-1', 'a', 'fp', 'd', 3_000).changes).toBe(0);
    expect(oldClaim.run('account-1', 'n', 'fp', 'd', 3_000).changes).toBe(1);
    // Oldest first, in the order of the rows.
    expect(old.prepare('SELECT key FROM idempotency ORDER BY rowid').pluck().all()).toEqual(['z', 'a', 'n']);
    old.close();
    await store.close();
  });

  it('commits the writes asked for in one turn together, each answered as if alone', async () => {
    const store = new SqliteIdempotencyStore(dir);
    const claim = (key: string, owner: string) => ({
      scope: 'account-1',
      key,
      fingerprint: `fp-${key}`,
      owner,
      after: null,
      now: 1_000,
    });
    // Twenty keys, and one of them twice: within the shared transaction the second finds it held.
    const claims = await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => store.claim(claim(`k${i}`, `a${i}`))),
      store.claim(claim('k0', 'b0')),
    ]);
    expect(claims.slice(0, 20)).toEqual(new Array(20).fill(null));
    expect(claims[20]).toEqual({
      fingerprint: 'fp-k0',
      started: 1_000,
      response: null,
      owner: 'a0',
      after: null,
    });
    await Promise.all([
      store.complete('account-1', 'k1', 'a1', 'answer'),
      store.release('account-1', 'k2', 'a2'),
    ]);
    expect(await store.claim(claim('k1', 'c1'))).toMatchObject({ response: 'answer', owner: 'a1' });
    expect(await store.claim(claim('k2', 'c2'))).toBeNull();

    // One commit per turn: a commit per write put two pages (the record and its index) in the
    // write-ahead log each, 40 or more for the claims alone.
    const db = openSidecarDatabase(dir, IDEMPOTENCY_FILE);
    const [{ log: frames }] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>;
    db.close();
    await store.close();
    expect(frames).toBeLessThan(20);
  });

  it('a prune that fails rejects, never throws: the API prunes from a timer, where a throw ends the process', async () => {
    // A data directory that cannot be opened stands for a prune SQLite refuses (busy, full disk).
    const notADirectory = join(dir, 'a-file');
    writeFileSync(notADirectory, '');
    const store = new SqliteIdempotencyStore(notADirectory);
    let pruned: Promise<void> | undefined;
    expect(() => (pruned = store.prune(1_000))).not.toThrow();
    await expect(pruned).rejects.toThrow(expect.objectContaining({ code: 'EEXIST' }));
  });

  it('in one turn: a statement that fails fails alone; a full disk fails every write and keeps none; a close commits what is queued', async () => {
    const store = new SqliteIdempotencyStore(dir);
    const claim = (key: string, fingerprint: string) => ({
      scope: 'account-1',
      key,
      fingerprint,
      owner: `o-${key}`,
      after: null,
      now: 1_000,
    });
    const keys = () => {
      const db = openSidecarDatabase(dir, IDEMPOTENCY_FILE);
      const kept = db.prepare('SELECT key FROM idempotency ORDER BY key').pluck().all();
      db.close();
      return kept;
    };
    // A NOT NULL column given null: SQLite undoes that statement only.
    const outcomes = await Promise.allSettled([
      store.claim(claim('a', 'fp')),
      store.claim(claim('b', null as unknown as string)),
      store.claim(claim('c', 'fp')),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(keys()).toEqual(['a', 'c']);

    // A full disk: SQLite gives the transaction up, so every write of the turn is refused.
    const db = (store as unknown as { db: { pragma(sql: string): unknown } }).db;
    db.pragma('max_page_count = 8');
    const full = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => store.claim(claim(`full-${i}`, 'x'.repeat(3000)))),
    );
    expect(new Set(full.map((outcome) => outcome.status))).toEqual(new Set(['rejected']));
    expect(keys()).toEqual(['a', 'c']);
    db.pragma('max_page_count = 1000000');

    const queued = store.claim(claim('d', 'fp'));
    await store.close();
    // Committed by the close itself, not by the turn after it.
    expect(keys()).toEqual(['a', 'c', 'd']);
    expect(await queued).toBeNull();
  });
});
