import { FSWatcher, readdirSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonLines, runCliProcess } from '../e2e/support/cli-process';
import { newDataDir } from '../e2e/support/test-app';
import { Api, kill9, running, startApi } from './support/api-process';

/**
 * The in-memory read models' snapshot (issue 21, restart cost): killed while it is written, or
 * found damaged, it costs a longer replay and nothing else.
 */

const SNAPSHOT = 'read-models.snapshot';
const ADMIN = { email: 'snap-admin@example.com', password: 'snapshot admin passphrase' };
const basic = `Basic ${Buffer.from(`${ADMIN.email}:${ADMIN.password}`).toString('base64')}`;
/** A snapshot after every 200 events: many writes to kill one in. */
const ENV = { READ_MODEL_SNAPSHOT_EVENTS: '200' };

const tempFiles = (dir: string) => readdirSync(dir).filter((name) => name.startsWith(`${SNAPSHOT}.`));

describe('the read models snapshot', () => {
  let dataDir: string;
  let userId: string;

  beforeEach(async () => {
    dataDir = newDataDir();
    const created = await runCliProcess(
      dataDir,
      ...['accounts', 'create', '--email', ADMIN.email, '--password', ADMIN.password],
      ...['--name', 'Snapshot Admin', '--age', '40', '--admin'],
    );
    expect(created.code).toBe(0);
    userId = (jsonLines(created.stdout)[0] as { userId: string }).userId;
    const seeded = await runCliProcess(dataDir, 'customers', 'seed', '--count', '20000');
    expect(seeded.code).toBe(0);
  });

  afterEach(async () => {
    await Promise.all([...running].map((child) => child.stop().catch(() => undefined)));
    running.clear();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function ready(api: Api): Promise<void> {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
      if ((await fetch(`${api.url}/health/ready`)).status === 200) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`Not ready within 60 s:\n${api.process.output()}`);
  }

  /** The admin's name as the read model has it (GET /users is served from the read model alone). */
  async function listedName(api: Api): Promise<string | undefined> {
    const response = await fetch(`${api.url}/users?maxpagesize=100`, { headers: { authorization: basic } });
    expect(response.status).toBe(200);
    const users = (await response.json()) as Array<{ id: string; name?: string }>;
    return users.find((user) => user.id === userId)?.name;
  }

  async function verify(): Promise<void> {
    const verified = await runCliProcess(dataDir, 'projections', 'verify');
    expect(jsonLines(verified.stdout)[0]).toMatchObject({ differences: 0 });
    expect(verified.code).toBe(0);
  }

  it('killed with SIGKILL while a snapshot is written: the restart equals a fresh replay and keeps every acknowledged write', async () => {
    let acknowledged = 'Snapshot Admin';
    let unanswered: string | null = null;
    let patches = 0;
    let killedMidWrite = false;
    let killedPid = 0;
    for (let attempt = 0; attempt < 5 && !killedMidWrite; attempt++) {
      const api = await startApi(dataDir, ENV);
      // SIGKILL the moment the third snapshot's temporary file appears (inotify, not polling):
      // two whole snapshots were written before, the last is what the restart should load.
      const writes = new Set<string>();
      let watcher: FSWatcher | undefined;
      const kill = new Promise<void>((resolve) => {
        watcher = watch(dataDir, (_, name) => {
          if (typeof name !== 'string' || !/\.tmp$/.test(name)) return;
          writes.add(name);
          if (writes.size < 3) return;
          watcher?.close();
          process.kill(api.process.pid, 'SIGKILL');
          resolve();
        });
      });
      let killed = false;
      void kill.then(() => (killed = true));
      // Acknowledged writes meanwhile: one PATCH after another, each answered 200 before the next.
      while (!killed) {
        const name = `Admin ${++patches}`;
        const response = await fetch(`${api.url}/users/${userId}`, {
          method: 'PATCH',
          headers: { authorization: basic, 'content-type': 'application/merge-patch+json' },
          body: JSON.stringify({ name }),
        }).catch(() => null);
        if (response?.status === 200) acknowledged = name;
        // Cut off by the kill: written or not, never answered.
        else if (response === null) unanswered = name;
        else if (!killed) throw new Error(`PATCH: ${response.status} ${await response.text()}`);
      }
      watcher?.close();
      await kill9(api).catch(() => undefined);
      // The write was cut short when its temporary file outlived the process.
      killedPid = api.process.pid;
      killedMidWrite = tempFiles(dataDir).some((name) => name.includes(`.${killedPid}.`));
    }
    expect(killedMidWrite).toBe(true);

    const restarted = await startApi(dataDir, ENV);
    await ready(restarted);
    // The dead writer's temporary file is gone; the snapshot in place, the last whole one, is used.
    expect(tempFiles(dataDir).filter((name) => name.includes(`.${killedPid}.`))).toEqual([]);
    expect(restarted.process.output()).not.toContain("Ignoring the read models' snapshot");
    expect(restarted.process.output()).toMatch(/Read models restored from .* at position \d+/);
    // Every acknowledged write is there; the one the kill cut off may be there too.
    expect([acknowledged, unanswered]).toContain(await listedName(restarted));
    await verify();
  }, 120_000);

  it('ignores a damaged snapshot with a log line and rebuilds the models from the events', async () => {
    const first = await startApi(dataDir, ENV);
    await ready(first);
    await first.process.waitForOutput(/snapshot written at position/);
    await first.process.stop();

    const file = join(dataDir, SNAPSHOT);
    const bytes = readFileSync(file);
    // In the last section, before the digest: only the digest can tell.
    bytes[bytes.length - 40] ^= 0xff;
    writeFileSync(file, bytes);

    const restarted = await startApi(dataDir, ENV);
    await ready(restarted);
    expect(restarted.process.output()).toMatch(
      /Ignoring the read models' snapshot .*: its digest does not match its contents; rebuilding them from the events/,
    );
    const customers = await fetch(`${restarted.url}/customers?maxpagesize=1`, {
      headers: { authorization: basic },
    });
    expect(customers.headers.get('x-total-count')).toBe('20000');
    await verify();
  });
});
