import { createHash, randomUUID } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@chronicle/event-store';
import { BACKUP_MANIFEST, backupDataDir, BackupManifest, restoreDataDir } from './data-dir-backup';

describe('backupDataDir and restoreDataDir', () => {
  let root: string;
  let dataDir: string;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'data-dir-backup-'));
    dataDir = join(root, 'data');
    const store = SqliteEventStore.open(dataDir);
    for (let i = 0; i < 200; i++) {
      await store.append(
        `thing-${i}`,
        [
          {
            id: randomUUID(),
            type: 'ThingHappened.v1',
            data: { i, padding: 'x'.repeat(500) },
            metadata: {
              actor: 'system',
              correlationId: 'c',
              causationId: null,
              occurredAt: new Date().toISOString(),
            },
          },
        ],
        'no_stream',
      );
    }
    await store.close();
    writeFileSync(join(dataDir, 'token-secret'), 'ab'.repeat(32), { mode: 0o600 });
    mkdirSync(join(dataDir, 'outbox'), { mode: 0o700 });
    writeFileSync(join(dataDir, 'outbox', 'password-reset-1.eml'), 'Subject: hi\r\n\r\nlink', {
      mode: 0o600,
    });
    // A write under way: never copied.
    writeFileSync(join(dataDir, 'outbox', '.password-reset-2.x.tmp'), 'partial', { mode: 0o600 });
    mkdirSync(join(dataDir, 'snapshots'), { mode: 0o700 });
    // Idempotency-Key answers may answer writes a restore loses: left out, as nothing unknown.
    for (const file of ['idempotency.db', 'idempotency.db-wal', 'idempotency.db-shm']) {
      writeFileSync(join(dataDir, file), 'x', { mode: 0o600 });
    }
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const backupDir = () => join(root, 'backup');
  const manifestOf = (dir: string) =>
    JSON.parse(readFileSync(join(dir, BACKUP_MANIFEST), 'utf8')) as BackupManifest;

  it('copies the store, its identity, the secret and the outbox, reports what it left out, and restores them', () => {
    const result = backupDataDir(dataDir, backupDir(), new Date('2026-01-02T03:04:05Z'));
    expect(result).toEqual(
      expect.objectContaining({
        directory: backupDir(),
        createdAt: '2026-01-02T03:04:05.000Z',
        storeId: readFileSync(join(dataDir, 'store-id'), 'utf8').trim(),
        position: '200',
        events: 200,
        skipped: ['snapshots'],
        notes: [],
      }),
    );
    expect(result.files.map((file) => file.path)).toEqual([
      'events.db',
      'store-id',
      'token-secret',
      'outbox/password-reset-1.eml',
    ]);
    expect(manifestOf(backupDir())).toEqual({
      format: 1,
      createdAt: result.createdAt,
      storeId: result.storeId,
      position: '200',
      events: 200,
      files: result.files,
    });

    const restored = join(root, 'restored');
    expect(restoreDataDir(backupDir(), restored)).toEqual({
      dataDir: restored,
      storeId: result.storeId,
      position: '200',
      events: 200,
      files: ['events.db', 'token-secret', 'outbox/password-reset-1.eml', 'store-id'],
    });
    expect(readdirSync(restored).sort()).toEqual(['events.db', 'outbox', 'store-id', 'token-secret']);
    expect(readFileSync(join(restored, 'outbox', 'password-reset-1.eml'), 'utf8')).toContain('link');
    expect(statSync(restored).mode & 0o777).toBe(0o700);
    expect(statSync(join(restored, 'outbox')).mode & 0o777).toBe(0o700);
    expect(statSync(join(restored, 'events.db')).mode & 0o777).toBe(0o600);
    // A server opens it as the same store.
    const store = SqliteEventStore.open(restored);
    return store.close();
  });

  it('notes a DATA_DIR without token-secret (TOKEN_SECRET set)', () => {
    rmSync(join(dataDir, 'token-secret'));
    const result = backupDataDir(dataDir, backupDir());
    expect(result.notes).toEqual([expect.stringContaining('keep that secret with this backup')]);
  });

  it('refuses a DATA_DIR whose events.db is another store than its store-id names, leaving no backup', () => {
    writeFileSync(join(dataDir, 'store-id'), `${randomUUID()}\n`);
    expect(() => backupDataDir(dataDir, backupDir())).toThrow(
      expect.objectContaining({ code: 'wrong-store' }),
    );
    expect(existsSync(backupDir())).toBe(false);
  });

  it('refuses a copy SQLite finds damaged, even when its manifest was made to match', () => {
    backupDataDir(dataDir, backupDir());
    const file = join(backupDir(), 'events.db');
    const bytes = readFileSync(file);
    // A page of the events table in the middle of the file.
    bytes.fill(0xa5, 8 * 4096, 9 * 4096);
    writeFileSync(file, bytes);
    const manifest = manifestOf(backupDir());
    const entry = manifest.files.find((f) => f.path === 'events.db')!;
    entry.sha256 = createHash('sha256').update(bytes).digest('hex');
    writeFileSync(join(backupDir(), BACKUP_MANIFEST), JSON.stringify(manifest));

    const restored = join(root, 'restored');
    expect(() => restoreDataDir(backupDir(), restored)).toThrow(
      expect.objectContaining({
        code: 'damaged-backup',
        message: expect.stringContaining("SQLite's integrity check failed"),
      }),
    );
    expect(existsSync(restored)).toBe(false);
  });

  it.each(['../escaped', '/etc/passwd', 'outbox/../../x', '.hidden'])(
    'refuses a manifest naming %s',
    (path) => {
      backupDataDir(dataDir, backupDir());
      const manifest = manifestOf(backupDir());
      manifest.files.push({ path, bytes: 0, sha256: '' });
      writeFileSync(join(backupDir(), BACKUP_MANIFEST), JSON.stringify(manifest));
      expect(() => restoreDataDir(backupDir(), join(root, 'restored'))).toThrow(
        expect.objectContaining({ code: 'damaged-backup' }),
      );
    },
  );

  it('restores into an existing empty directory, and into no other', () => {
    backupDataDir(dataDir, backupDir());
    const target = join(root, 'empty');
    mkdirSync(target, { mode: 0o755 });
    restoreDataDir(backupDir(), target);
    expect(statSync(target).mode & 0o777).toBe(0o700);

    const used = join(root, 'used');
    mkdirSync(used);
    writeFileSync(join(used, 'notes.txt'), 'mine');
    expect(() => restoreDataDir(backupDir(), used)).toThrow(
      expect.objectContaining({ code: 'data-dir-not-empty' }),
    );
    expect(readdirSync(used)).toEqual(['notes.txt']);
  });
});
