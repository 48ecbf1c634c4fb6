import { mkdtempSync, rmSync } from 'node:fs';
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

  it('runs the operations asked within one turn in the order asked, each settled when committed', async () => {
    const store = new SqliteIdempotencyStore(dir);
    const claim = { scope: 'account-1', key: 'k', fingerprint: 'fp', now: 1_000, leaseMs: 60_000 };
    const outcomes = await Promise.all([
      store.claim({ ...claim, owner: 'a' }),
      store.claim({ ...claim, owner: 'b', now: 1_001 }),
      store.complete('account-1', 'k', 'a', 'answer'),
      store.claim({ ...claim, owner: 'c', now: 1_002 }),
      store.release('account-1', 'k', 'a'),
      store.claim({ ...claim, key: 'other', owner: 'd' }),
    ]);
    expect(outcomes).toEqual([
      null,
      { fingerprint: 'fp', started: 1_000, response: null },
      undefined,
      { fingerprint: 'fp', started: 1_000, response: 'answer' },
      undefined,
      null,
    ]);
    // Asked and not yet run when the store closes: written by the close.
    let written = false;
    const kept = store.complete('account-1', 'other', 'd', 'kept').then(() => (written = true));
    await store.close();
    expect(written).toBe(true);
    await kept;
    const reopened = new SqliteIdempotencyStore(dir);
    expect(await reopened.claim({ ...claim, key: 'other', owner: 'e', now: 1_003 })).toEqual({
      fingerprint: 'fp',
      started: 1_000,
      response: 'kept',
    });
    await reopened.close();
  });

  it('opens a database made with the by_start index: records kept, the index dropped', async () => {
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
      now: 2_000,
      leaseMs: 60_000,
    };
    expect(await store.claim(claim)).toEqual({ fingerprint: 'fp', started: 1_000, response: 'answer' });
    await store.close();

    const reopened = openSidecarDatabase(dir, IDEMPOTENCY_FILE);
    const indexes = reopened
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'idempotency' ORDER BY name",
      )
      .pluck()
      .all();
    reopened.close();
    expect(indexes).toEqual(['idempotency_by_scope']);
  });
});
