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
    reopened.close();
    expect(indexes).toEqual(['idempotency_by_scope']);
  });
});
