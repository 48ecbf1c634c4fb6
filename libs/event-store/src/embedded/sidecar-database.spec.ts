import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSidecarDatabase } from './sidecar-database';
import { DATA_KEYS_FILE, SqliteDataKeyStore } from './sqlite-data-key-store';

describe('openSidecarDatabase', () => {
  const dataDir = () => join(mkdtempSync(join(tmpdir(), 'sidecar-')), 'data');
  const settings = (mode?: 'fast' | 'durable') => {
    const db = openSidecarDatabase(dataDir(), 'x.db', mode);
    try {
      return {
        journal: db.pragma('journal_mode', { simple: true }),
        synchronous: db.pragma('synchronous', { simple: true }),
        secureDelete: db.pragma('secure_delete', { simple: true }),
        busyTimeoutMs: db.pragma('busy_timeout', { simple: true }),
      };
    } finally {
      db.close();
    }
  };

  it('opens fast by default: WAL, no fsync per write; waits 10 s for a lock held elsewhere, not 5', () => {
    expect(settings()).toEqual({ journal: 'wal', synchronous: 1, secureDelete: 0, busyTimeoutMs: 10_000 });
  });

  it('opens durable: a rollback journal, every commit and its journal removal synced, deletions zeroed', () => {
    expect(settings('durable')).toEqual({
      journal: 'delete',
      synchronous: 3,
      secureDelete: 1,
      busyTimeoutMs: 10_000,
    });
  });

  it('creates DATA_DIR private and the file 0600, for the data keys too, at their first use only', async () => {
    const dir = dataDir();
    const store = new SqliteDataKeyStore(dir, Buffer.alloc(32, 1));
    expect(() => statSync(dir)).toThrow('ENOENT');
    await store.create({ kind: 'user', id: 'u' });
    await store.destroy({ subject: { kind: 'user', id: 'u' }, erasedAt: '2026-11-27T00:00:00Z' });
    await store.close();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readdirSync(dir)).toEqual([DATA_KEYS_FILE]);
    expect(statSync(join(dir, DATA_KEYS_FILE)).mode & 0o777).toBe(0o600);
  });
});
