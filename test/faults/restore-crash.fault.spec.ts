import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runCliProcess, runCliWith, runCliWithInput } from '../e2e/support/cli-process';
import { byteScanner } from '../e2e/support/byte-scan';
import { basic, newDataDir } from '../e2e/support/test-app';
import { exitWithin, startAppProcess, startProjector } from '../support/app-process';
import { createFaultAdmin, FAULT_ADMIN, running, startApi, stopRunning } from './support/api-process';

/** Kill points of a `restore`, each a preload that SIGKILLs the CLI there. */
const KILLED = {
  'between the copy and the re-application of the erasures': join(
    __dirname,
    'support',
    'kill-before-erasures-reapplied.preload.ts',
  ),
  // The erasure's SubjectErased.v1 appended to the restored history, its key not yet destroyed.
  'while the erasures are re-applied': join(__dirname, 'support', 'kill-before-erasure-completed.preload.ts'),
};

const PERSON = { email: 'qwzrt.restored@restore-crash.example', password: 'a person-to-erase passphrase' };
const PERSON_NAME = 'Qwzrt Lazarus-Numbat';

/**
 * A restore cut short (issue 35, "Backups that cannot resurrect"): a backup taken before an
 * erasure, DATA_DIR lost, and `restore` SIGKILLed once the backup's files (the person's key among
 * them) are in place and before their erasure is re-applied. Nothing opens that DATA_DIR until
 * `restore` is run again, which finishes it: the person stays erased, and no byte of them is left.
 */
describe.each(Object.entries(KILLED))('a restore killed %s', (_point, preload) => {
  let root: string;
  let dataDir: string;

  beforeEach(() => {
    root = newDataDir();
    dataDir = join(root, 'data');
  });

  afterEach(async () => {
    await stopRunning();
    rmSync(root, { recursive: true, force: true });
  });

  it('leaves a DATA_DIR nothing opens until `restore` is run again, which finishes it: 410, no byte left', async () => {
    await createFaultAdmin(dataDir);
    const created = await runCliWithInput(
      dataDir,
      PERSON.password,
      ...['accounts', 'create', '--email', PERSON.email, '--password-stdin'],
      ...['--name', PERSON_NAME, '--age', '61'],
    );
    expect(created.stderr).toBe('');
    const { userId } = JSON.parse(created.stdout) as { userId: string };
    const backupDir = join(root, 'backup');
    const taken = await runCliProcess(dataDir, 'backup', backupDir);
    expect(taken.stderr).toBe('');
    const erased = await runCliProcess(dataDir, 'erase', '--user', userId);
    expect(erased.stderr).toBe('');

    // DATA_DIR is lost; the seal key was kept apart, the erasure log beside DATA_DIR.
    const keptSealKey = join(root, 'kept-audit-seal-key');
    copyFileSync(join(dataDir, 'audit-seal-key'), keptSealKey);
    rmSync(dataDir, { recursive: true, force: true });
    mkdirSync(dataDir, { mode: 0o700 });
    copyFileSync(keptSealKey, join(dataDir, 'audit-seal-key'));

    const killed = await runCliWith({ dataDir, nodeOptions: ['-r', preload] }, 'restore', backupDir);
    expect(killed.signal).toBe('SIGKILL');
    // The copy is whole (store-id is written last), the person's key with it.
    expect(readdirSync(dataDir)).toEqual(expect.arrayContaining(['events.db', 'data-keys.db', 'store-id']));

    // The API refuses to start, as the other start-up refusals: one line, exit code 78.
    const api = startAppProcess('api', { DATA_DIR: dataDir, PORT: '0' });
    running.add(api);
    expect(await exitWithin(api, 30_000)).toBe('code 78');
    expect(api.output().trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(`^Invalid configuration: DATA_DIR \\(${dataDir}\\) holds a restore that did not finish`),
      ),
    ]);
    expect(api.output()).toContain(`run \`restore ${backupDir}\` again to finish it`);
    // So do the projector and the CLI's other commands.
    const projector = startProjector({ DATA_DIR: dataDir });
    running.add(projector);
    expect(await exitWithin(projector, 30_000)).toBe('code 78');
    expect(projector.output()).toContain('holds a restore that did not finish');
    const read = await runCliProcess(dataDir, 'users', 'get', userId);
    expect(read.stdout).not.toContain(PERSON_NAME);
    expect(read.code).toBe(1);
    expect(JSON.parse(read.stderr)).toEqual({
      error: 'invalid-configuration',
      message: expect.stringContaining(`run \`restore ${backupDir}\` again to finish it`),
    });

    const finished = await runCliProcess(dataDir, 'restore', backupDir);
    expect(finished.stderr).toBe('');
    expect(finished.code).toBe(0);
    expect(JSON.parse(finished.stdout)).toEqual(
      expect.objectContaining({
        // The copy was whole: kept as it was, not copied again.
        files: [],
        resumed: { startedAt: expect.any(String) },
        erasures: {
          reapplied: [expect.objectContaining({ subject: `user-${userId}`, kind: 'user' })],
          notHeld: 0,
          unreadable: 0,
        },
      }),
    );
    expect(existsSync(join(dataDir, 'restore-in-progress'))).toBe(false);

    const again = await startApi(dataDir);
    const admin = { authorization: basic(FAULT_ADMIN) };
    expect((await fetch(`${again.url}/users/${userId}`, { headers: admin })).status).toBe(410);
    expect((await fetch(`${again.url}/users/${userId}/export`, { headers: admin })).status).toBe(410);
    expect(
      (await fetch(`${again.url}/users/${userId}`, { headers: { authorization: basic(PERSON) } })).status,
    ).toBe(401);
    await stopRunning();

    const scan = byteScanner([PERSON_NAME, PERSON.email]);
    scan.scanFilesUnder(dataDir);
    expect(scan.hits).toEqual([]);
    // The erasure log still lists the person: a later restore of the same backup erases them too.
    expect(readFileSync(`${dataDir}.erasures.jsonl`, 'utf8')).toContain(userId);
  }, 120_000);
});
