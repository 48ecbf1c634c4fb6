import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { jsonLines, runCliProcess, runCliWithInput } from '../e2e/support/cli-process';
import { issueToken, newDataDir, TestAccount } from '../e2e/support/test-app';
import { running, startApi, stopRunning } from './support/api-process';

/**
 * `backup DIR` and `restore DIR` (issue 22): a backup taken while the API answers parallel PATCHes
 * restores into an empty DATA_DIR, passes `projections verify`, and holds every write acknowledged
 * before it began, as a prefix of the live history.
 */

const PASSWORD = 'backup-test-passphrase';
const WRITERS = 4;

interface Acknowledged {
  userId: string;
  revision: number;
  age: number;
  at: number;
}

describe('backup and restore of the embedded store', () => {
  const dirs: string[] = [];
  const scratch = () => {
    const dir = newDataDir();
    dirs.push(dir);
    return dir;
  };

  afterEach(async () => {
    await stopRunning();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function createAccount(dataDir: string, n: number): Promise<TestAccount> {
    const email = `writer-${n}@example.com`;
    const created = await runCliWithInput(
      dataDir,
      PASSWORD,
      ...['accounts', 'create', '--email', email, '--password-stdin', '--name', `W${n}`, '--age', '20'],
    );
    expect(created.code).toBe(0);
    return {
      ...(JSON.parse(created.stdout) as { accountId: string; userId: string }),
      email,
      password: PASSWORD,
    };
  }

  /** Audit records of one stream in a DATA_DIR (no server needed). */
  async function history(dataDir: string, stream: string): Promise<Array<Record<string, any>>> {
    const result = await runCliProcess(dataDir, 'audit', '--stream', stream, '--limit', '100000');
    expect(result.code).toBe(0);
    // The export ends with its manifest and cursor lines: the records are the rest.
    return jsonLines(result.stdout).filter((line) => !('manifest' in line) && !('cursor' in line));
  }

  it('is taken under sustained parallel writes, restores, verifies and holds every acknowledged write', async () => {
    const dataDir = scratch();
    const accounts: TestAccount[] = [];
    for (let n = 0; n < WRITERS; n++) accounts.push(await createAccount(dataDir, n));
    // A history big enough for the copy to take a while.
    expect((await runCliProcess(dataDir, 'customers', 'seed', '--count', '3000')).code).toBe(0);
    const api = await startApi(dataDir);
    const tokens = await Promise.all(accounts.map((account) => issueToken(api.url, account)));

    const acknowledged: Acknowledged[] = [];
    const failures: string[] = [];
    let writing = true;
    const writers = accounts.map(async (account, i) => {
      for (let age = 21; writing; age = age >= 150 ? 21 : age + 1) {
        const response = await fetch(`${api.url}/users/${account.userId}`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${tokens[i]}`, 'content-type': 'application/merge-patch+json' },
          body: JSON.stringify({ age }),
        });
        if (response.status !== 200) {
          failures.push(`${response.status} ${await response.text()}`);
          continue;
        }
        const revision = Number(JSON.parse(response.headers.get('etag')!));
        acknowledged.push({ userId: account.userId, revision, age, at: Date.now() });
      }
    });
    // Writes are under way before the backup starts, and go on until it has ended.
    while (acknowledged.length < 20) await new Promise((resolve) => setTimeout(resolve, 10));
    const backupDir = join(scratch(), 'backup');
    // A clock tick on, so that those 20 were acknowledged strictly before the backup began.
    await new Promise((resolve) => setTimeout(resolve, 2));
    const started = Date.now();
    const backup = await runCliProcess(dataDir, 'backup', backupDir);
    const ended = Date.now();
    const duringBackup = acknowledged.filter((write) => write.at > started && write.at < ended).length;
    await new Promise((resolve) => setTimeout(resolve, 200));
    writing = false;
    await Promise.all(writers);

    expect(failures).toEqual([]);
    expect(backup.stderr).toBe('');
    expect(backup.code).toBe(0);
    expect(duringBackup).toBeGreaterThan(10);
    expect(acknowledged.filter((write) => write.at < started).length).toBeGreaterThanOrEqual(20);
    const manifest = JSON.parse(backup.stdout) as Record<string, any>;
    expect(manifest).toEqual(
      expect.objectContaining({
        directory: backupDir,
        storeId: readFileSync(join(dataDir, 'store-id'), 'utf8').trim(),
        position: expect.stringMatching(/^\d+$/),
        events: expect.any(Number),
        skipped: [],
      }),
    );
    expect(manifest.files.map((file: { path: string }) => file.path)).toEqual(
      expect.arrayContaining(['events.db', 'store-id', 'token-secret', 'limits.db']),
    );
    // Private: the directory 0700, every file 0600.
    expect(statSync(backupDir).mode & 0o777).toBe(0o700);
    for (const name of readdirSync(backupDir))
      expect(statSync(join(backupDir, name)).mode & 0o777).toBe(0o600);

    // The seal key is kept apart from the backups: put back first, then the data restored beside it.
    expect(readdirSync(backupDir)).not.toContain('audit-seal-key');
    const restored = scratch();
    copyFileSync(join(dataDir, 'audit-seal-key'), join(restored, 'audit-seal-key'));
    const restore = await runCliProcess(restored, 'restore', backupDir);
    expect(restore.stderr).toBe('');
    expect(restore.code).toBe(0);
    expect(JSON.parse(restore.stdout)).toEqual(
      expect.objectContaining({ dataDir: restored, storeId: manifest.storeId, events: manifest.events }),
    );
    const db = new Database(join(restored, 'events.db'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.prepare('SELECT count(*) AS n FROM events').get()).toEqual({ n: manifest.events });
    } finally {
      db.close();
    }

    for (const account of accounts) {
      const stream = `user-${account.userId}`;
      const live = await history(dataDir, stream);
      const copy = await history(restored, stream);
      // A consistent copy: a prefix of the live history, event for event.
      expect(copy).toEqual(live.slice(0, copy.length));
      // Every write acknowledged before the backup began is in it, at its revision, with its value.
      for (const write of acknowledged.filter((w) => w.userId === account.userId && w.at < started)) {
        expect(copy[write.revision]).toEqual(
          expect.objectContaining({
            revision: write.revision,
            data: expect.objectContaining({ changes: { age: write.age } }),
          }),
        );
      }
    }

    // The restored DATA_DIR serves, and its read models, rebuilt from the copy, verify.
    await api.process.stop();
    running.delete(api.process);
    const again = await startApi(restored);
    const deadline = Date.now() + 30_000;
    while ((await fetch(`${again.url}/health/ready`)).status !== 200) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const verify = await runCliProcess(restored, 'projections', 'verify');
    expect(verify.code).toBe(0);
    expect(jsonLines(verify.stdout).at(-1)).toEqual(expect.objectContaining({ differences: 0 }));
    // The token secret came back too: a token issued before the backup still works.
    const me = await fetch(`${again.url}/users/${accounts[0].userId}`, {
      headers: { authorization: `Bearer ${tokens[0]}` },
    });
    expect(me.status).toBe(200);
  }, 120_000);

  it('restores only into an empty or absent DATA_DIR, and never from a damaged or unfinished backup', async () => {
    const dataDir = scratch();
    await createAccount(dataDir, 0);
    const backupDir = join(scratch(), 'backup');
    expect((await runCliProcess(dataDir, 'backup', backupDir)).code).toBe(0);

    // Into a DATA_DIR in use: refused, nothing touched.
    const before = readdirSync(dataDir).sort();
    const intoLive = await runCliProcess(dataDir, 'restore', backupDir);
    expect(intoLive.code).toBe(1);
    expect(JSON.parse(intoLive.stderr)).toEqual({
      error: 'data-dir-not-empty',
      message: expect.stringContaining(`DATA_DIR (${dataDir}) is not empty`),
    });
    expect(readdirSync(dataDir).sort()).toEqual(before);

    // A backup into a directory that is not empty: refused.
    const taken = await runCliProcess(dataDir, 'backup', backupDir);
    expect(taken.code).toBe(1);
    expect(JSON.parse(taken.stderr)).toEqual(expect.objectContaining({ error: 'backup-target-not-empty' }));

    // One changed byte in the copy: refused before anything is written.
    const file = join(backupDir, 'events.db');
    const bytes = readFileSync(file);
    bytes[bytes.length - 100] ^= 0xff;
    writeFileSync(file, bytes);
    const target = join(scratch(), 'data');
    const damaged = await runCliProcess(target, 'restore', backupDir);
    expect(damaged.code).toBe(1);
    expect(JSON.parse(damaged.stderr)).toEqual(expect.objectContaining({ error: 'damaged-backup' }));
    expect(existsSync(target)).toBe(false);

    // Without its manifest (a backup that did not finish): not a backup.
    rmSync(join(backupDir, 'chronicle-backup.json'));
    const unfinished = await runCliProcess(target, 'restore', backupDir);
    expect(JSON.parse(unfinished.stderr)).toEqual(expect.objectContaining({ error: 'not-a-backup' }));
    expect(existsSync(target)).toBe(false);
  }, 60_000);

  /** Issue 37, findings 2 to 4: backups that vouch for themselves. */
  describe('the hash chain of what is copied', () => {
    /** Changes one event's data in the events.db at `file`, dropping the triggers first. */
    function editEvent(file: string, position: number): void {
      const db = new Database(file);
      try {
        db.exec('DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete;');
        db.prepare(`UPDATE events SET data = json_set(data, '$.name', 'Edited') WHERE position = ?`).run(
          position,
        );
      } finally {
        db.close();
      }
    }

    /** A restore target holding the kept seal key of `dataDir`, as docs/operations.md says. */
    function restoreTarget(dataDir: string): string {
      const target = scratch();
      copyFileSync(join(dataDir, 'audit-seal-key'), join(target, 'audit-seal-key'));
      return target;
    }

    it('refuses a backup whose event was edited and whose manifest bytes and sha256 were recomputed', async () => {
      const dataDir = scratch();
      await createAccount(dataDir, 1);
      const backupDir = join(scratch(), 'backup');
      const taken = await runCliProcess(dataDir, 'backup', backupDir);
      expect(taken.code).toBe(0);
      expect(JSON.parse(taken.stdout)).toMatchObject({
        lastRecordHash: expect.stringMatching(/^[0-9a-f]{64}$/),
        chain: { ok: true, broken: null },
      });
      const file = join(backupDir, 'events.db');
      editEvent(file, 2);
      const manifestFile = join(backupDir, 'chronicle-backup.json');
      const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
      const bytes = readFileSync(file);
      const entry = manifest.files.find((f: { path: string }) => f.path === 'events.db');
      entry.bytes = bytes.length;
      entry.sha256 = createHash('sha256').update(bytes).digest('hex');
      writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
      const target = restoreTarget(dataDir);

      const restore = await runCliProcess(target, 'restore', backupDir);

      expect(restore.code).toBe(1);
      expect(JSON.parse(restore.stderr)).toEqual({
        error: 'chain-mismatch',
        message: expect.stringContaining('not signed with this seal key'),
      });
      expect(readdirSync(target)).toEqual(['audit-seal-key']);
      // Without the seal key at hand, told not to check the signature: the chain itself says where.
      const withoutKey = scratch();
      const unchecked = await runCliProcess(withoutKey, 'restore', backupDir, '--allow-unverified');
      expect(JSON.parse(unchecked.stderr)).toEqual({
        error: 'broken-chain',
        message: expect.stringContaining('breaks at position 2'),
      });
      expect(readdirSync(withoutKey)).toEqual([]);
    }, 60_000);

    it('refuses to back up a broken store, naming the position; with --allow-broken records it, and restore refuses', async () => {
      const dataDir = scratch();
      await createAccount(dataDir, 1);
      editEvent(join(dataDir, 'events.db'), 2);
      const backupDir = join(scratch(), 'backup');

      const refused = await runCliProcess(dataDir, 'backup', backupDir);
      const allowed = await runCliProcess(dataDir, 'backup', backupDir, '--allow-broken');
      const target = restoreTarget(dataDir);
      const restore = await runCliProcess(target, 'restore', backupDir);

      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stderr)).toEqual({
        error: 'broken-chain',
        message: expect.stringContaining('breaks at position 2'),
      });
      expect(allowed.code).toBe(0);
      expect(JSON.parse(allowed.stdout)).toMatchObject({ chain: { ok: false, broken: { position: '2' } } });
      expect(restore.code).toBe(1);
      expect(JSON.parse(restore.stderr)).toEqual({
        error: 'broken-chain',
        message: expect.stringContaining('breaks at position 2'),
      });
      expect(readdirSync(target)).toEqual(['audit-seal-key']);
    }, 60_000);
  });
});
