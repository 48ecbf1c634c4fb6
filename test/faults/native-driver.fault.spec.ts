import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runCliWith } from '../e2e/support/cli-process';
import { newDataDir } from '../e2e/support/test-app';
import { startApi, stopRunning } from '../support/app-process';
import { GC_PRESSURE } from '../support/gc-pressure';

/**
 * The embedded store's native driver under garbage-collector pressure, on the runtime the tests run
 * on (issue 31). On Node 24, better-sqlite3 12 and older aborted the whole process
 * (`Assertion failed: (env) != nullptr` in RemoveEnvironmentCleanupHook, from ~Statement) when a
 * statement was finalised at the wrong moment: CLI commands at exit, a worker thread as it
 * stopped, the server under ordinary use. Each case here runs many times, with collections forced
 * every few milliseconds, and fails on any abort.
 */

const ROOT = join(__dirname, '..', '..');
// The aborts pinned here were Node 24's, with better-sqlite3 12 (issue 31); the fix is the driver
// (13, Node-API). The hunt ran 20 runs and 50 worker cycles, two of CI's minutes; 8 and 20 keep it
// a hunt under GC pressure at under one. `.ci/run` repeats the file on Node 22 with a quarter of
// the repetitions (NATIVE_DRIVER_SHARE=0.25): a check that the driver loads and holds there.
const SHARE = Number(process.env.NATIVE_DRIVER_SHARE ?? 1);
const RUNS = Math.max(1, Math.round(8 * SHARE));
const CYCLES = Math.max(1, Math.round(20 * SHARE));
const PASSWORD = 'native-driver-passphrase';

/** How a run ended: 0, another exit code, or the signal that killed it (SIGABRT for an abort). */
const ending = (result: { code: number; signal: string | null }) => result.signal ?? result.code;

describe('the embedded store driver under garbage-collector pressure', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = newDataDir();
    const seeded = await runCliWith({ dataDir }, 'customers', 'seed', '--count', '300');
    expect(seeded.code).toBe(0);
  });

  afterAll(async () => {
    await stopRunning();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const commands: Array<[string, (run: number) => { args: string[]; input?: string }]> = [
    ['projections rebuild', () => ({ args: ['projections', 'rebuild'] })],
    ['customers seed', () => ({ args: ['customers', 'seed', '--count', '50'] })],
    [
      'accounts create',
      (run) => ({
        args: [
          'accounts',
          'create',
          '--email',
          `gc-${run}@example.com`,
          '--password-stdin',
          '--name',
          'G',
          '--age',
          '30',
        ],
        input: PASSWORD,
      }),
    ],
    [
      'backup',
      (run) => ({ args: ['backup', join(dataDir, '..', `${dataDir.split('/').pop()}-backup-${run}`)] }),
    ],
  ];

  it.each(commands)(
    `the CLI's %s exits 0 ${RUNS} times in a row`,
    async (_name, command) => {
      const endings: Array<number | string> = [];
      const failures: string[] = [];
      for (let run = 0; run < RUNS; run++) {
        const { args, input } = command(run);
        const result = await runCliWith({ dataDir, input, nodeOptions: GC_PRESSURE }, ...args);
        endings.push(ending(result));
        if (ending(result) !== 0) failures.push(result.stderr.slice(-500));
        if (args[0] === 'backup') rmSync(args[1], { recursive: true, force: true });
      }
      expect({ endings, failures }).toEqual({ endings: new Array(RUNS).fill(0), failures: [] });
    },
    180_000,
  );

  it(`the saga worker thread stops and starts ${CYCLES} times with no abort and no lost e-mail`, async () => {
    const email = 'cycles@example.com';
    const created = await runCliWith(
      { dataDir, input: PASSWORD },
      ...['accounts', 'create', '--email', email, '--password-stdin', '--name', 'C', '--age', '30'],
    );
    expect(created.code).toBe(0);
    const driver = await new Promise<{ ending: number | string; stdout: string; stderr: string }>(
      (resolve) => {
        execFile(
          process.execPath,
          ['-r', '@swc-node/register', join(__dirname, 'support', 'saga-worker-cycles.ts')],
          {
            cwd: ROOT,
            env: {
              ...process.env,
              SWC_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
              DATA_DIR: dataDir,
              EMAIL: email,
              CYCLES: String(CYCLES),
              LOG_LEVEL: 'error',
              METRICS_PORT: '0',
              RESET_REQUESTS_PER_EMAIL: '1000',
              RESET_REQUESTS_PER_CLIENT: '1000',
            },
            maxBuffer: 64 * 1024 * 1024,
          },
          (error, stdout, stderr) =>
            resolve({ ending: error ? (error.signal ?? Number(error.code)) : 0, stdout, stderr }),
        );
      },
    );
    expect({ ending: driver.ending, stderr: driver.stderr.slice(-2000) }).toEqual({ ending: 0, stderr: '' });
    // Its last line (the lines before it are the log's).
    const { requested, tokens } = JSON.parse(driver.stdout.trim().split('\n').pop()!) as {
      requested: number;
      tokens: string[];
    };
    // One e-mail per request, each with its own token: none lost, none sent twice.
    expect(requested).toBe(CYCLES);
    expect(new Set(tokens).size).toBe(CYCLES);
    expect(tokens).toHaveLength(CYCLES);
  }, 200_000);

  it('the server goes through a whole acceptance flow with collections forced every few milliseconds', async () => {
    const admin = { email: 'flow-admin@example.com', password: PASSWORD };
    const created = await runCliWith(
      { dataDir, input: admin.password },
      ...[
        'accounts',
        'create',
        '--email',
        admin.email,
        '--password-stdin',
        '--name',
        'Flow',
        '--age',
        '40',
        '--admin',
      ],
    );
    expect(created.code).toBe(0);
    const { userId } = JSON.parse(created.stdout) as { userId: string };
    const api = await startApi(
      dataDir,
      { RESET_REQUESTS_PER_EMAIL: '1000', RESET_REQUESTS_PER_CLIENT: '1000' },
      { nodeOptions: GC_PRESSURE },
    );
    const basic = (password: string) =>
      `Basic ${Buffer.from(`${admin.email}:${password}`).toString('base64')}`;
    const call = (path: string, init: RequestInit = {}) => fetch(`${api.url}${path}`, init);

    for (let round = 0; round < 3; round++) {
      const minted = await call('/api/v1/account/tokens', {
        method: 'POST',
        headers: { authorization: basic(admin.password) },
      });
      expect(minted.status).toBe(201);
      const bearer = {
        authorization: `Bearer ${((await minted.json()) as { access_token: string }).access_token}`,
      };
      for (let page = 1; page <= 5; page++) {
        expect((await call(`/customers?maxpagesize=50&page=${page}&gt=10`, { headers: bearer })).status).toBe(
          200,
        );
      }
      const patch = (body: unknown, accept: string) =>
        call(`/users/${userId}`, {
          method: 'PATCH',
          headers: { ...bearer, 'content-type': 'application/merge-patch+json', accept },
          body: JSON.stringify(body),
        });
      expect((await patch({ name: `Flow ${round}`, age: 41 + round }, 'application/json')).status).toBe(200);
      expect((await patch({ age: 50 + round }, 'application/vnd.chronicle.fragment+json')).status).toBe(200);
      expect((await call(`/users/${userId}`, { headers: bearer })).status).toBe(200);
      expect((await call('/users?maxpagesize=20', { headers: bearer })).status).toBe(200);
      expect((await call('/api/v1/audit/events?limit=50', { headers: bearer })).status).toBe(200);

      // A reset: the e-mail, its token completed, then a change back with the new password.
      const before = new Set(existsSync(join(dataDir, 'outbox')) ? readdirSync(join(dataDir, 'outbox')) : []);
      const requested = await call('/api/v1/account/password', {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: admin.email }),
      });
      expect(requested.status).toBe(202);
      let token: string | undefined;
      for (
        const deadline = Date.now() + 30_000;
        token === undefined;
        await new Promise((r) => setTimeout(r, 50))
      ) {
        if (Date.now() > deadline) throw new Error(`No reset e-mail within 30 s:\n${api.process.output()}`);
        for (const name of readdirSync(join(dataDir, 'outbox'))) {
          if (before.has(name) || !name.endsWith('.eml')) continue;
          token ??= /reset-password\?token=([A-Za-z0-9_-]+)/.exec(
            readFileSync(join(dataDir, 'outbox', name), 'utf8'),
          )?.[1];
        }
      }
      const reset = await call('/api/v1/account/password', {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token, new: `${PASSWORD} reset` }),
      });
      expect(reset.status).toBe(204);
      const changed = await call('/api/v1/account/password', {
        method: 'PUT',
        headers: { authorization: basic(`${PASSWORD} reset`), 'content-type': 'application/json' },
        body: JSON.stringify({ old: `${PASSWORD} reset`, new: admin.password }),
      });
      expect(changed.status).toBe(204);
      expect(api.process.exit()).toBeNull();
    }
    // Stopped as a supervisor stops it: Nest closes the app, then re-raises SIGTERM (no abort).
    expect(await api.process.stop()).toEqual({ code: null, signal: 'SIGTERM' });
  }, 180_000);
});
