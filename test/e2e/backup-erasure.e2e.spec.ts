import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { jsonLines, runCliProcess } from './support/cli-process';
import { byteScanner, filesUnder } from './support/byte-scan';
import { E2E_BACKEND, newDataDir, sendAs, startTestApp, TestAccount, TestApp } from './support/test-app';
import { eventually } from './support/eventually';

/**
 * `backup` and `restore` (CLI) with personal data (issue 35): the data keys travel with a backup,
 * and a restore re-applies the erasures logged since (ERASURE_LOG, kept beside DATA_DIR by
 * default), even once DATA_DIR itself is lost. The embedded store only: `backup` copies DATA_DIR.
 */
const describeEmbedded = E2E_BACKEND === 'embedded' ? describe : describe.skip;

describeEmbedded('backup and restore with personal data', () => {
  const dirs: string[] = [];
  const apps: TestApp[] = [];
  const scratch = () => {
    const dir = newDataDir();
    dirs.push(dir);
    return dir;
  };
  const start = async (dataDir: string) => {
    const app = await startTestApp({ dataDir });
    apps.push(app);
    return app;
  };
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.stop();
    for (const dir of dirs.splice(0)) {
      rmSync(dir, { recursive: true, force: true });
      rmSync(`${dir}.erasures.jsonl`, { force: true });
    }
  });

  const send = (
    app: TestApp,
    as: TestAccount,
    method: 'GET' | 'POST' | 'PATCH',
    path: string,
    body?: unknown,
  ) => sendAs(as, `${app.url}${path}`, method, body);
  const remove = (app: TestApp, as: TestAccount, path: string) =>
    fetch(`${app.url}${path}`, {
      method: 'DELETE',
      headers: { authorization: `Basic ${Buffer.from(`${as.email}:${as.password}`).toString('base64')}` },
    });

  /** Every audit record of the subjects' streams, as the CLI prints them (decrypted) from `dataDir`. */
  async function recordsOf(dataDir: string, streams: string[]): Promise<Array<Record<string, any>>> {
    const audit = await runCliProcess(dataDir, 'audit', '--limit', '100000');
    expect(audit.stderr).toBe('');
    expect(audit.code).toBe(0);
    return jsonLines(audit.stdout).filter((record) => streams.includes(record.stream));
  }

  /** Backs `dataDir` up into a new directory, through the CLI. */
  async function backup(dataDir: string): Promise<string> {
    const target = join(scratch(), 'backup');
    const taken = await runCliProcess(dataDir, 'backup', target);
    expect(taken.stderr).toBe('');
    expect(taken.code).toBe(0);
    return target;
  }

  /** Restores `backupDir` into `dataDir` holding the kept seal key, through the CLI. */
  async function restore(backupDir: string, dataDir: string, sealKey: string): Promise<Record<string, any>> {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    copyFileSync(sealKey, join(dataDir, 'audit-seal-key'));
    const restored = await runCliProcess(dataDir, 'restore', backupDir);
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
    return JSON.parse(restored.stdout) as Record<string, any>;
  }

  it('carries the data keys and their secret: every personal value reads back after a restore', async () => {
    const dataDir = scratch();
    const app = await start(dataDir);
    const admin = await app.createAccount({ admin: true });
    const person = await app.createAccount({ name: 'Rtrip Person-Kiwi', age: 33 });
    expect(
      (await send(app, admin, 'PATCH', `/users/${person.userId}`, { name: 'Rtrip Renamed-Kiwi' })).status,
    ).toBe(200);
    const created = await send(app, admin, 'POST', '/customers', {
      name: 'Rtrip Customer',
      email: 'rtrip@example.com',
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    const streams = [`user-${person.userId}`, `account-${person.accountId}`, `customer-${id}`];

    const backupDir = await backup(dataDir);
    await app.stop();
    const original = await recordsOf(dataDir, streams);
    const restoredDir = join(scratch(), 'data');
    const restored = await restore(backupDir, restoredDir, join(dataDir, 'audit-seal-key'));

    expect(restored.erasures).toEqual({ reapplied: [], notHeld: 0, unreadable: 0 });
    const copy = await recordsOf(restoredDir, streams);
    expect(copy).toEqual(original);
    const values = JSON.stringify(copy.map((record) => record.data));
    for (const value of [
      'Rtrip Person-Kiwi',
      'Rtrip Renamed-Kiwi',
      person.email,
      'Rtrip Customer',
      'rtrip@example.com',
    ]) {
      expect(values).toContain(JSON.stringify(value));
    }
    expect(copy.some((record) => record.erased)).toBe(false);
    // Listed in the signed manifest (each file's size and SHA-256 checked by the restore), and restored.
    const taken = JSON.parse(readFileSync(join(backupDir, 'chronicle-backup.json'), 'utf8')) as {
      files: Array<{ path: string }>;
    };
    expect(taken.files.map((file) => file.path)).toEqual(
      expect.arrayContaining(['events.db', 'data-keys.db', 'data-key-secret']),
    );
    expect(restored.files).toEqual(expect.arrayContaining(['data-keys.db', 'data-key-secret']));
  }, 60_000);

  it('restores a backup taken before two erasures into a lost DATA_DIR without them: 410, out of the lists, no byte left; a backup taken after holds none', async () => {
    const personName = 'Vbnmq Restorable-Wombat';
    const customerName = 'Vbnmq Customer-Dingo';
    const customerEmail = 'vbnmq.dingo@restore.example';
    const dataDir = scratch();
    const app = await start(dataDir);
    const admin = await app.createAccount({ admin: true });
    const person = await app.createAccount({ name: personName, age: 52 });
    const created = await send(app, admin, 'POST', '/customers', {
      name: customerName,
      email: customerEmail,
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    // A reset e-mail in the outbox names the person's address: the backup holds it.
    const reset = await fetch(`${app.url}/api/v1/account/password`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: person.email }),
    });
    expect(reset.status).toBe(202);
    await eventually('the reset e-mail is in the outbox', () =>
      filesUnder(dataDir).some(
        (file) => file.endsWith('.eml') && readFileSync(file, 'utf8').includes(person.email),
      ),
    );
    const texts = [personName, person.email, customerName, customerEmail];

    const before = await backup(dataDir);
    const inBackup = byteScanner(texts);
    inBackup.scanFilesUnder(before);
    // The backup holds the address in the outbox's e-mail: what the restore must not bring back.
    expect(inBackup.hits.some((hit) => hit.includes('outbox'))).toBe(true);

    expect((await remove(app, admin, `/users/${person.userId}`)).status).toBe(204);
    expect((await remove(app, admin, `/customers/${id}`)).status).toBe(204);
    await app.settle();
    // A backup taken after the erasures holds no byte of them.
    const after = await backup(dataDir);
    const inLaterBackup = byteScanner(texts);
    inLaterBackup.scanFilesUnder(after);
    expect(inLaterBackup.hits).toEqual([]);

    // DATA_DIR is lost, all of it; the seal key was kept apart, and the erasure log beside DATA_DIR.
    await app.stop();
    const keptSealKey = join(scratch(), 'audit-seal-key');
    copyFileSync(join(dataDir, 'audit-seal-key'), keptSealKey);
    rmSync(dataDir, { recursive: true, force: true });
    expect(existsSync(`${dataDir}.erasures.jsonl`)).toBe(true);

    const restored = await restore(before, dataDir, keptSealKey);
    expect(restored.erasures).toEqual({
      reapplied: [
        expect.objectContaining({ subject: `user-${person.userId}`, kind: 'user' }),
        expect.objectContaining({ subject: `customer-${id}`, kind: 'customer' }),
      ],
      notHeld: 0,
      unreadable: 0,
    });

    const again = await start(dataDir);
    for (const path of [`/users/${person.userId}`, `/customers/${id}`, `/users/${person.userId}/export`]) {
      const response = await send(again, admin, 'GET', path);
      expect({ path, status: response.status }).toEqual({ path, status: 410 });
    }
    const users = await send(again, admin, 'GET', '/users?maxpagesize=1000');
    expect(((await users.json()) as Array<{ id: string }>).map((user) => user.id)).not.toContain(
      person.userId,
    );
    expect(Number(users.headers.get('x-total-count'))).toBe(1);
    const customers = await send(again, admin, 'GET', '/customers?maxpagesize=1000');
    expect(((await customers.json()) as Array<{ id: number }>).map((customer) => customer.id)).not.toContain(
      id,
    );
    expect(Number(customers.headers.get('x-total-count'))).toBe(0);
    // The person cannot log in: their account is closed again.
    const login = await fetch(`${again.url}/users/${person.userId}`, {
      headers: {
        authorization: `Basic ${Buffer.from(`${person.email}:${person.password}`).toString('base64')}`,
      },
    });
    expect(login.status).toBe(401);
    await again.stop();

    const inRestored = byteScanner(texts);
    inRestored.scanFilesUnder(dataDir);
    expect(inRestored.hits).toEqual([]);

    // The backup taken after the erasures, restored with the same log: they are re-applied as
    // `erase` answers a repeat, the first erasure kept, and no second SubjectErased.v1 written.
    const afterManifest = JSON.parse(readFileSync(join(after, 'chronicle-backup.json'), 'utf8')) as {
      events: number;
    };
    rmSync(dataDir, { recursive: true, force: true });
    const repeat = await restore(after, dataDir, keptSealKey);
    expect(repeat.events).toBe(afterManifest.events);
    expect(repeat.erasures.reapplied).toEqual(
      restored.erasures.reapplied.map(() => expect.objectContaining({ position: expect.any(String) })),
    );
    const audit = await runCliProcess(dataDir, 'audit', '--limit', '100000');
    const erasureEvents = jsonLines(audit.stdout).filter((record) => record.type === 'SubjectErased.v1');
    expect(erasureEvents.map((record) => record.stream).sort()).toEqual(
      [`customer-${id}`, `user-${person.userId}`].sort(),
    );
    expect(erasureEvents.every((record) => Number(record.position) <= afterManifest.events)).toBe(true);
  }, 120_000);
});
