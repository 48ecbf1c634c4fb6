import { createHash, randomUUID } from 'node:crypto';
import {
  cpSync,
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
import Database from 'better-sqlite3';
import { parseConfig, RESTORE_MARKER_FILE } from '@chronicle/config';
import { SqliteDataKeyStore, SqliteEventStore } from '@chronicle/event-store';
import { BACKUP_MANIFEST, BackupManifest } from './backup-manifest';
import { backupDataDir, restoreDataDir, RestoreOptions } from './data-dir-backup';

const SEAL_KEY = Buffer.alloc(32, 7);
const backup = (dataDir: string, target: string, options: { allowBroken?: boolean; now?: Date } = {}) =>
  backupDataDir(dataDir, target, { sealKey: SEAL_KEY, ...options });
const restore = (source: string, dataDir: string, options: Partial<RestoreOptions> = {}) =>
  restoreDataDir(source, dataDir, { sealKey: SEAL_KEY, ...options });

/** Edits events.db at `file` as someone who can write it: the triggers dropped first. */
function tamper(file: string, sql: string): void {
  const db = new Database(file);
  try {
    db.exec('DROP TRIGGER IF EXISTS events_no_update; DROP TRIGGER IF EXISTS events_no_delete;');
    db.exec(sql);
  } finally {
    db.close();
  }
}

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

  it('copies the store, its identity, the secret and the outbox, reports what it left out, and restores them', async () => {
    const result = await backup(dataDir, backupDir(), { now: new Date('2026-01-02T03:04:05Z') });
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
    const head = {
      position: '200',
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      recordedAt: expect.any(String),
    };
    expect(manifestOf(backupDir())).toEqual({
      format: 2,
      createdAt: result.createdAt,
      storeId: result.storeId,
      position: '200',
      events: 200,
      lastRecordHash: head.hash,
      chain: { ok: true, scope: 'log', events: 200, head, broken: null },
      files: result.files,
      signature: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(manifestOf(backupDir()).lastRecordHash).toBe(manifestOf(backupDir()).chain!.head!.hash);

    const restored = join(root, 'restored');
    expect(await restore(backupDir(), restored)).toEqual({
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

  it('copies the data keys online and their kept secret, checked and restored; notes a DATA_KEY_SECRET kept elsewhere', async () => {
    const secret = Buffer.alloc(32, 9);
    const keys = new SqliteDataKeyStore(dataDir, secret);
    const key = await keys.create({ kind: 'customer', id: '1' });
    await keys.destroy({ subject: { kind: 'customer', id: '2' }, erasedAt: '2026-01-01T00:00:00.000Z' });
    writeFileSync(join(dataDir, 'data-key-secret'), secret.toString('hex'), { mode: 0o600 });
    // Held open, as a running server holds it.
    const result = await backup(dataDir, backupDir());
    await keys.close();
    expect(result.files.map((file) => file.path)).toEqual(
      expect.arrayContaining(['data-keys.db', 'data-key-secret']),
    );
    expect(result.skipped).toEqual(['snapshots']);
    expect(result.notes).toEqual([]);

    // One changed byte of the copied keys: refused before anything is written.
    const copy = join(backupDir(), 'data-keys.db');
    const original = readFileSync(copy);
    const changed = Buffer.from(original);
    changed[changed.length - 1] ^= 0xff;
    writeFileSync(copy, changed);
    await expect(restore(backupDir(), join(root, 'refused'))).rejects.toThrow(
      expect.objectContaining({ code: 'damaged-backup' }),
    );
    expect(existsSync(join(root, 'refused'))).toBe(false);
    writeFileSync(copy, original);

    const restored = join(root, 'restored');
    expect((await restore(backupDir(), restored)).files).toEqual(
      expect.arrayContaining(['data-keys.db', 'data-key-secret']),
    );
    const back = new SqliteDataKeyStore(restored, secret);
    try {
      expect(await back.get({ kind: 'customer', id: '1' })).toEqual({ state: 'active', key });
      expect(await back.get({ kind: 'customer', id: '2' })).toEqual(
        expect.objectContaining({ state: 'erased' }),
      );
    } finally {
      await back.close();
    }

    rmSync(join(dataDir, 'data-key-secret'));
    const elsewhere = await backup(dataDir, join(root, 'second'));
    expect(elsewhere.notes).toEqual([expect.stringContaining('keep that secret with this backup')]);
    expect(elsewhere.notes[0]).toContain('DATA_KEY_SECRET');
  });

  it('re-applies the logged erasures once the files are in place, and removes them all when that fails', async () => {
    await backup(dataDir, backupDir());
    const erasures = { reapplied: [], notHeld: 1, unreadable: 0 };
    const seen: string[][] = [];
    const restored = join(root, 'restored');
    const result = await restore(backupDir(), restored, {
      eraseAgain: () => {
        seen.push(readdirSync(restored).sort());
        return Promise.resolve(erasures);
      },
    });
    expect(result.erasures).toBe(erasures);
    expect(seen).toEqual([['events.db', 'outbox', 'restore-in-progress', 'store-id', 'token-secret']]);

    const failed = join(root, 'failed');
    await expect(
      restore(backupDir(), failed, { eraseAgain: () => Promise.reject(new Error('the log cannot be read')) }),
    ).rejects.toThrow('the log cannot be read');
    expect(existsSync(failed)).toBe(false);
  });

  it('notes a DATA_DIR without token-secret (TOKEN_SECRET set)', async () => {
    rmSync(join(dataDir, 'token-secret'));
    const result = await backup(dataDir, backupDir());
    expect(result.notes).toEqual([expect.stringContaining('keep that secret with this backup')]);
  });

  it('refuses a DATA_DIR whose events.db is another store than its store-id names, leaving no backup', async () => {
    writeFileSync(join(dataDir, 'store-id'), `${randomUUID()}\n`);
    await expect(backup(dataDir, backupDir())).rejects.toThrow(
      expect.objectContaining({ code: 'wrong-store' }),
    );
    expect(existsSync(backupDir())).toBe(false);
  });

  it('refuses a copy SQLite finds damaged, even when its manifest was made to match', async () => {
    await backup(dataDir, backupDir());
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
    await expect(restore(backupDir(), restored, { allowUnverified: true, sealKey: null })).rejects.toThrow(
      expect.objectContaining({
        code: 'damaged-backup',
        message: expect.stringContaining("SQLite's integrity check failed"),
      }),
    );
    expect(existsSync(restored)).toBe(false);
  });

  it.each(['../escaped', '/etc/passwd', 'outbox/../../x', '.hidden'])(
    'refuses a manifest naming %s',
    async (path) => {
      await backup(dataDir, backupDir());
      const manifest = manifestOf(backupDir());
      manifest.files.push({ path, bytes: 0, sha256: '' });
      writeFileSync(join(backupDir(), BACKUP_MANIFEST), JSON.stringify(manifest));
      await expect(restore(backupDir(), join(root, 'restored'))).rejects.toThrow(
        expect.objectContaining({ code: 'damaged-backup' }),
      );
    },
  );

  it('restores into an existing empty directory, and into no other', async () => {
    await backup(dataDir, backupDir());
    const target = join(root, 'empty');
    mkdirSync(target, { mode: 0o755 });
    await restore(backupDir(), target);
    expect(statSync(target).mode & 0o777).toBe(0o700);

    const used = join(root, 'used');
    mkdirSync(used);
    writeFileSync(join(used, 'notes.txt'), 'mine');
    await expect(restore(backupDir(), used)).rejects.toThrow(
      expect.objectContaining({ code: 'data-dir-not-empty' }),
    );
    expect(readdirSync(used)).toEqual(['notes.txt']);
  });

  describe('a restore cut short (issue 35): its marker', () => {
    const erasures = { reapplied: [], notHeld: 0, unreadable: 0 };
    const startedAt = new Date('2026-03-04T05:06:07Z');

    /** What a restore killed as it re-applies the erasures leaves in DATA_DIR: a copy of it then. */
    async function cutShort(): Promise<string> {
      const restored = join(root, 'restored');
      const cut = join(root, 'cut');
      await restore(backupDir(), restored, {
        now: startedAt,
        eraseAgain: () => {
          cpSync(restored, cut, { recursive: true });
          return Promise.resolve(erasures);
        },
      });
      return cut;
    }

    beforeEach(() => backup(dataDir, backupDir()));

    it('is in DATA_DIR, private, naming the backup and when, from the copy until the erasures are re-applied', async () => {
      const restored = join(root, 'restored');
      const seen: unknown[] = [];
      await restore(backupDir(), restored, {
        now: startedAt,
        eraseAgain: () => {
          const marker = join(restored, RESTORE_MARKER_FILE);
          seen.push(JSON.parse(readFileSync(marker, 'utf8')), statSync(marker).mode & 0o777);
          // Meanwhile every other process refuses DATA_DIR.
          expect(() => parseConfig({ DATA_DIR: restored })).toThrow('holds a restore that did not finish');
          return Promise.resolve(erasures);
        },
      });
      expect(seen).toEqual([
        {
          backup: backupDir(),
          manifestSha256: createHash('sha256')
            .update(readFileSync(join(backupDir(), BACKUP_MANIFEST)))
            .digest('hex'),
          startedAt: '2026-03-04T05:06:07.000Z',
        },
        0o600,
      ]);
      expect(existsSync(join(restored, RESTORE_MARKER_FILE))).toBe(false);
      expect(parseConfig({ DATA_DIR: restored }).dataDir).toBe(restored);
    });

    it('finishes a restore of the same backup cut short after its copy: the files kept as they are, the erasures re-applied', async () => {
      const cut = await cutShort();
      // An erasure re-applied before the kill: a copy over it would undo it.
      const store = SqliteEventStore.open(cut);
      await store.append(
        'thing-0',
        [
          {
            id: randomUUID(),
            type: 'ThingErased.v1',
            data: {},
            metadata: {
              actor: 'cli:x',
              correlationId: 'c',
              causationId: null,
              occurredAt: startedAt.toISOString(),
            },
          },
        ],
        'any',
      );
      await store.close();
      let erasedAgainOn: string[] = [];

      const result = await restore(backupDir(), cut, {
        eraseAgain: () => {
          erasedAgainOn = readdirSync(cut).sort();
          return Promise.resolve(erasures);
        },
      });

      expect(result).toEqual(
        expect.objectContaining({
          dataDir: cut,
          files: [],
          erasures,
          resumed: { startedAt: '2026-03-04T05:06:07.000Z' },
        }),
      );
      expect(erasedAgainOn).toContain(RESTORE_MARKER_FILE);
      expect(existsSync(join(cut, RESTORE_MARKER_FILE))).toBe(false);
      const reopened = SqliteEventStore.open(cut);
      try {
        expect((await reopened.readStream('thing-0')).map((event) => event.type)).toEqual([
          'ThingHappened.v1',
          'ThingErased.v1',
        ]);
      } finally {
        await reopened.close();
      }
    });

    it('copies again a restore of the same backup cut short during its copy (no store-id yet)', async () => {
      const cut = await cutShort();
      rmSync(join(cut, 'store-id'));
      writeFileSync(join(cut, 'events.db'), 'half a copy');
      writeFileSync(join(cut, '.token-secret.123.abcd1234.tmp'), 'a temporary file of the copy');

      const result = await restore(backupDir(), cut, { eraseAgain: () => Promise.resolve(erasures) });

      expect(result.files).toEqual(['events.db', 'token-secret', 'outbox/password-reset-1.eml', 'store-id']);
      expect(result.resumed).toEqual({ startedAt: '2026-03-04T05:06:07.000Z' });
      expect(readdirSync(cut).sort()).toEqual(['events.db', 'outbox', 'store-id', 'token-secret']);
      expect(readFileSync(join(cut, 'events.db'))).toEqual(readFileSync(join(backupDir(), 'events.db')));
    });

    it('refuses to finish it with another backup, naming the one that finishes it, and touches nothing', async () => {
      const cut = await cutShort();
      const other = join(root, 'other-backup');
      await backup(dataDir, other, { now: new Date('2026-05-06T07:08:09Z') });
      const before = readdirSync(cut).sort();

      await expect(restore(other, cut)).rejects.toThrow(
        expect.objectContaining({
          code: 'other-restore-unfinished',
          message: expect.stringContaining(
            `run \`restore ${backupDir()}\` again to finish it; ${other} is not the backup it names`,
          ),
        }),
      );
      expect(readdirSync(cut).sort()).toEqual(before);
    });

    it('removes everything but the kept seal key, the marker with it, when finishing fails', async () => {
      const cut = await cutShort();
      writeFileSync(join(cut, 'audit-seal-key'), SEAL_KEY.toString('hex'), { mode: 0o600 });

      await expect(
        restore(backupDir(), cut, { eraseAgain: () => Promise.reject(new Error('the log cannot be read')) }),
      ).rejects.toThrow('the log cannot be read');
      expect(readdirSync(cut)).toEqual(['audit-seal-key']);
    });
  });

  describe('the hash chain and the seal key (issue 37)', () => {
    /** An event of the backup's copy edited, and the manifest's size and SHA-256 of it made to match. */
    function editBackup(): void {
      const file = join(backupDir(), 'events.db');
      tamper(file, `UPDATE events SET data = json_set(data, '$.i', 999) WHERE position = 17`);
      const manifest = manifestOf(backupDir());
      const entry = manifest.files.find((f) => f.path === 'events.db')!;
      const bytes = readFileSync(file);
      entry.bytes = bytes.length;
      entry.sha256 = createHash('sha256').update(bytes).digest('hex');
      writeFileSync(join(backupDir(), BACKUP_MANIFEST), JSON.stringify(manifest, null, 2));
    }

    it('refuses to back up a store whose chain breaks, naming the position, and leaves no backup', async () => {
      tamper(
        join(dataDir, 'events.db'),
        `UPDATE events SET data = json_set(data, '$.i', 999) WHERE position = 17`,
      );

      await expect(backup(dataDir, backupDir())).rejects.toThrow(
        expect.objectContaining({
          code: 'broken-chain',
          message: expect.stringContaining('breaks at position 17'),
        }),
      );
      expect(existsSync(backupDir())).toBe(false);
    });

    it('backs up a broken store with allowBroken, recording chain.ok: false; its restore refuses unless told', async () => {
      tamper(
        join(dataDir, 'events.db'),
        `UPDATE events SET data = json_set(data, '$.i', 999) WHERE position = 17`,
      );

      const result = await backup(dataDir, backupDir(), { allowBroken: true });

      expect(result.chain).toMatchObject({
        ok: false,
        events: 17,
        head: { position: '16' },
        broken: { position: '17' },
      });
      expect(result.notes).toContain(
        'The hash chain breaks at position 17: backed up as it is (--allow-broken)',
      );
      await expect(restore(backupDir(), join(root, 'refused'))).rejects.toThrow(
        expect.objectContaining({ code: 'broken-chain', message: expect.stringContaining('position 17') }),
      );
      expect(existsSync(join(root, 'refused'))).toBe(false);
      await expect(
        restore(backupDir(), join(root, 'forensics'), { allowBroken: true }),
      ).resolves.toMatchObject({
        events: 200,
      });
    });

    it('refuses a backup whose event was edited and whose manifest digests were made to match', async () => {
      await backup(dataDir, backupDir());
      editBackup();
      const target = join(root, 'restored');

      // The manifest no longer carries its signature's text.
      await expect(restore(backupDir(), target)).rejects.toThrow(
        expect.objectContaining({
          code: 'chain-mismatch',
          message: expect.stringContaining('not signed with this seal key'),
        }),
      );
      // Without the signature check, the chain itself still says where.
      await expect(restore(backupDir(), target, { allowUnverified: true, sealKey: null })).rejects.toThrow(
        expect.objectContaining({
          code: 'broken-chain',
          message: expect.stringContaining('breaks at position 17'),
        }),
      );
      expect(existsSync(target)).toBe(false);
    });

    it('refuses a manifest whose head was moved to another event, signed or not', async () => {
      await backup(dataDir, backupDir());
      const manifest = manifestOf(backupDir());
      manifest.chain!.head!.position = '199';
      writeFileSync(join(backupDir(), BACKUP_MANIFEST), JSON.stringify(manifest, null, 2));

      await expect(restore(backupDir(), join(root, 'a'))).rejects.toThrow(
        expect.objectContaining({ code: 'chain-mismatch' }),
      );
      await expect(
        restore(backupDir(), join(root, 'b'), { allowUnverified: true, sealKey: null }),
      ).rejects.toThrow(
        expect.objectContaining({ code: 'chain-mismatch', message: expect.stringContaining('ends at 200') }),
      );
    });

    it('never copies the seal key, says so, and restores next to a kept one put in DATA_DIR first', async () => {
      writeFileSync(join(dataDir, 'audit-seal-key'), SEAL_KEY.toString('hex'), { mode: 0o600 });

      const result = await backup(dataDir, backupDir());
      const target = join(root, 'restored');
      mkdirSync(target, { mode: 0o700 });
      writeFileSync(join(target, 'audit-seal-key'), SEAL_KEY.toString('hex'), { mode: 0o600 });

      expect(readdirSync(backupDir())).not.toContain('audit-seal-key');
      expect(result.skipped).not.toContain('audit-seal-key');
      expect(result.notes).toEqual([expect.stringContaining('audit-seal-key is not in the backup')]);
      await expect(restore(backupDir(), target)).resolves.toMatchObject({ events: 200 });
      expect(readdirSync(target).sort()).toEqual([
        'audit-seal-key',
        'events.db',
        'outbox',
        'store-id',
        'token-secret',
      ]);
    });

    it('refuses without a seal key, or with another, unless told not to check the signature', async () => {
      await backup(dataDir, backupDir());

      await expect(restore(backupDir(), join(root, 'a'), { sealKey: null })).rejects.toThrow(
        expect.objectContaining({ code: 'no-seal-key' }),
      );
      await expect(restore(backupDir(), join(root, 'b'), { sealKey: Buffer.alloc(32, 8) })).rejects.toThrow(
        expect.objectContaining({ code: 'chain-mismatch' }),
      );
      await expect(
        restore(backupDir(), join(root, 'c'), { sealKey: null, allowUnverified: true }),
      ).resolves.toMatchObject({ events: 200 });
    });

    it('refuses a backup of format 1 (no head, no signature) unless told', async () => {
      await backup(dataDir, backupDir());
      const { lastRecordHash, chain, signature, ...rest } = manifestOf(backupDir());
      expect([lastRecordHash, chain, signature]).not.toContain(undefined);
      writeFileSync(join(backupDir(), BACKUP_MANIFEST), JSON.stringify({ ...rest, format: 1 }));

      await expect(restore(backupDir(), join(root, 'a'))).rejects.toThrow(
        expect.objectContaining({ code: 'unsigned-backup' }),
      );
      await expect(restore(backupDir(), join(root, 'b'), { allowUnverified: true })).resolves.toMatchObject({
        events: 200,
      });
    });
  });
});
