import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESTORE_MARKER_FILE, writeRestoreMarker } from '@chronicle/config';
import { SqliteEventStore } from '@chronicle/event-store';
import { runCli } from '../run-cli';

describe('backup and restore commands (in process)', () => {
  let root: string;
  let out: string[];
  let err: string[];

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'cli-backup-'));
    await SqliteEventStore.open(join(root, 'data')).close();
    out = [];
    err = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => out.push(String(chunk)) > 0);
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => err.push(String(chunk)) > 0);
  });
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(root, { recursive: true, force: true });
  });

  const run = (env: Record<string, string>, ...argv: string[]) =>
    runCli(argv, { DATA_DIR: join(root, 'data'), LOG_LEVEL: 'silent', ...env });

  it('refuses with EVENTSTORE_URL set, pointing to the stores’ own procedures', async () => {
    expect(await run({ EVENTSTORE_URL: 'esdb://127.0.0.1:1?tls=false' }, 'backup', join(root, 'b'))).toBe(1);
    expect(JSON.parse(err.join(''))).toEqual({
      error: 'not-embedded',
      message: expect.stringContaining("with EventStoreDB's own procedure"),
    });
    expect(existsSync(join(root, 'b'))).toBe(false);
  });

  it('notes that read models and checkpoints in MongoDB are not in the backup', async () => {
    expect(await run({ MONGODB_URI: 'mongodb://127.0.0.1:1/x' }, 'backup', join(root, 'b'))).toBe(0);
    expect(JSON.parse(out.join('')).notes).toEqual([
      expect.stringContaining('audit-seal-key is not in the backup'),
      expect.stringContaining('MONGODB_URI is set'),
    ]);
  });

  it('restores into an absent DATA_DIR with the seal key the backup was signed with, resolving both paths', async () => {
    const sealKey = { AUDIT_SEAL_KEY: 'a seal key kept apart from the data, 32+ chars' };
    expect(await run(sealKey, 'backup', join(root, 'b'))).toBe(0);
    out.length = 0;
    expect(await run({ DATA_DIR: join(root, 'restored') }, 'restore', join(root, 'b'))).toBe(1);
    expect(JSON.parse(err.join(''))).toMatchObject({ error: 'no-seal-key' });
    expect(await run({ ...sealKey, DATA_DIR: join(root, 'restored') }, 'restore', join(root, 'b'))).toBe(0);
    expect(JSON.parse(out.join(''))).toEqual(
      expect.objectContaining({ dataDir: join(root, 'restored'), events: 0 }),
    );
  });

  it('refuses every other command on a DATA_DIR whose restore was cut short; `restore` of the same backup finishes it', async () => {
    const sealKey = { AUDIT_SEAL_KEY: 'a seal key kept apart from the data, 32+ chars' };
    const restored = { ...sealKey, DATA_DIR: join(root, 'restored') };
    expect(await run(sealKey, 'backup', join(root, 'b'))).toBe(0);
    expect(await run(restored, 'restore', join(root, 'b'))).toBe(0);
    // As a restore killed before it re-applied the erasures leaves it.
    writeRestoreMarker(restored.DATA_DIR, {
      backup: join(root, 'b'),
      manifestSha256: createHash('sha256')
        .update(readFileSync(join(root, 'b', 'chronicle-backup.json')))
        .digest('hex'),
      startedAt: '2026-03-04T05:06:07.000Z',
    });
    for (const command of [
      ['users', 'get', 'u-1'],
      ['backup', join(root, 'b2')],
      ['erase', '--user', 'u-1'],
    ]) {
      err.length = 0;
      expect(await run(restored, ...command)).toBe(1);
      expect(JSON.parse(err.join(''))).toEqual({
        error: 'invalid-configuration',
        message: expect.stringContaining(`run \`restore ${join(root, 'b')}\` again to finish it`),
      });
    }
    expect(existsSync(join(root, 'b2'))).toBe(false);

    out.length = 0;
    expect(await run(restored, 'restore', join(root, 'b'))).toBe(0);
    expect(JSON.parse(out.join(''))).toEqual(
      expect.objectContaining({
        files: [],
        resumed: { startedAt: '2026-03-04T05:06:07.000Z' },
        erasures: { reapplied: [], notHeld: 0, unreadable: 0 },
      }),
    );
    expect(existsSync(join(restored.DATA_DIR, RESTORE_MARKER_FILE))).toBe(false);
    expect(await run(restored, 'users', 'get', 'u-1')).toBe(1);
    expect(JSON.parse(err.join('').split('\n').filter(Boolean).at(-1)!)).toMatchObject({
      error: 'not-found',
    });
  });
});
