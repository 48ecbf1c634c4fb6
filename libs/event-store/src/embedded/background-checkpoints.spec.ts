import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { BackgroundCheckpoints, BACKSTOP_PAGES, COMMITS_PER_CHECKPOINT } from './background-checkpoints';
import { openSidecarDatabase } from './sidecar-database';

describe('BackgroundCheckpoints', () => {
  let dir: string;
  let db: Database.Database;
  const file = () => statSync(join(dir, 'sidecar.db')).size;
  const until = async (done: () => boolean) => {
    for (let waited = 0; !done(); waited += 10) {
      if (waited > 5_000) throw new Error('not within 5 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  /** `count` commits, each of a row of 2 KiB: a page of log or more each. */
  const commit = (count: number, checkpoints?: BackgroundCheckpoints) => {
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    for (let i = 0; i < count; i += 1) {
      insert.run('x'.repeat(2048));
      checkpoints?.committed();
    }
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'background-checkpoints-'));
    db = openSidecarDatabase(dir, 'sidecar.db');
    db.exec('CREATE TABLE t (v TEXT)');
  });
  afterEach(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves the connection no checkpoint below the backstop, and has the worker take them', async () => {
    const checkpoints = BackgroundCheckpoints.start(db);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(BACKSTOP_PAGES);
    const empty = file();
    // One short of a checkpoint: every page is still in the log only.
    commit(COMMITS_PER_CHECKPOINT - 1, checkpoints);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(file()).toBe(empty);

    // The next commit asks the worker, which writes the pages back into the database.
    commit(1, checkpoints);
    await until(() => file() >= empty + COMMITS_PER_CHECKPOINT * 2048);
    await checkpoints.stop();
  });

  it('stops with its connection closed: the last connection out removes the log', async () => {
    const checkpoints = BackgroundCheckpoints.start(db);
    commit(COMMITS_PER_CHECKPOINT, checkpoints);
    await checkpoints.stop();
    db.close();
    expect(() => statSync(join(dir, 'sidecar.db-wal'))).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    expect(file()).toBeGreaterThanOrEqual(COMMITS_PER_CHECKPOINT * 2048);
  });

  it('keeps the process alive while it stops, though the worker never does otherwise', () => {
    // A process whose last work is a store's close: what follows the stop must still run.
    const script = `
      const { openSidecarDatabase } = require('./sidecar-database');
      const { BackgroundCheckpoints } = require('./background-checkpoints');
      const db = openSidecarDatabase(${JSON.stringify(dir)}, 'other.db');
      const checkpoints = BackgroundCheckpoints.start(db);
      checkpoints.stop().then(() => { db.close(); process.stdout.write('closed'); });
    `;
    const child = spawnSync(process.execPath, ['-r', '@swc-node/register', '-e', script], {
      cwd: __dirname,
      env: { ...process.env, SWC_NODE_PROJECT: join(__dirname, '../../../../tsconfig.json') },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(child.stderr).toBe('');
    expect(child.stdout).toBe('closed');
  });
});
