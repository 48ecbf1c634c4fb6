import { closeSync, openSync, readFileSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { runCliProcess } from '../e2e/support/cli-process';
import { newDataDir } from '../e2e/support/test-app';
import { running, startApi } from './support/api-process';
import { describeExit, startAppProcess } from '../support/app-process';

/** A DATA_DIR that lost its store, or holds a damaged one (issue 21 problems 3 and 6). */

describe('the embedded store on start-up', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = newDataDir();
    const seeded = await runCliProcess(dataDir, 'customers', 'seed', '--count', '3000');
    expect(seeded.code).toBe(0);
  });

  afterEach(async () => {
    await Promise.all([...running].map((child) => child.stop().catch(() => undefined)));
    running.clear();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('records an identity when the store is created', () => {
    expect(readFileSync(join(dataDir, 'store-id'), 'utf8')).toMatch(/^[0-9a-f-]{36}\n$/);
  });

  it.each(['emptied to 0 bytes', 'deleted'])(
    'refuses to start on a store %s, naming DATA_DIR and the file, with exit code 78',
    async (what) => {
      const file = join(dataDir, 'events.db');
      for (const suffix of ['-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
      if (what === 'deleted') rmSync(file);
      else truncateSync(file, 0);

      const api = startAppProcess('api', { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info' });
      running.add(api);
      expect(describeExit(await api.exited)).toBe('code 78');
      const message = api
        .output()
        .split('\n')
        .find((line) => line.startsWith('DATA_DIR'));
      expect(message).toContain(
        `DATA_DIR (${dataDir}): ${file} is ${what === 'deleted' ? 'missing' : 'empty (0 bytes)'}`,
      );
      expect(message).toContain('restore it from a backup');
      // Nothing was created in its place.
      expect(
        what === 'deleted' ? statSync(file, { throwIfNoEntry: false }) : statSync(file).size,
      ).toBeFalsy();
    },
  );

  it('stops with a message, not a silent retry loop, when a page of the store is damaged', async () => {
    const file = join(dataDir, 'events.db');
    const { size } = statSync(file);
    const fd = openSync(file, 'r+');
    try {
      // Pages in the middle of the table: the replay reads them after start-up.
      writeSync(fd, Buffer.alloc(16 * 4096, 0xa5), 0, 16 * 4096, Math.floor(size / 2 / 4096) * 4096);
    } finally {
      closeSync(fd);
    }
    const api = await startApi(dataDir).catch(() => null);
    const child = api?.process ?? [...running].at(-1)!;
    let timer: NodeJS.Timeout | undefined;
    const exit = await Promise.race([
      child.exited,
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), 15_000))),
    ]);
    clearTimeout(timer);
    expect(exit && describeExit(exit)).toBe('code 74');
    expect(child.output()).toMatch(
      /The event store cannot be read \(.*(malformed|SQLITE_CORRUPT|not a database).*\): restore DATA_DIR from a backup/,
    );
  });
});
