import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { running, startApi } from './support/api-process';

/** A full disk under the embedded store (issue 21 problem 5), on a small tmpfs where mounting is allowed. */

function mountSmallDisk(): { path: string | null; reason: string } {
  const path = mkdtempSync(join(tmpdir(), 'chronicle-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', path], { stdio: 'pipe' });
    return { path, reason: '' };
  } catch (error) {
    rmSync(path, { recursive: true, force: true });
    return { path: null, reason: `mounting a tmpfs is not allowed here: ${String(error).split('\n')[0]}` };
  }
}

/** Writes zeros until the disk is full. */
function fill(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

const disk = mountSmallDisk();
const onTmpfs = disk.path === null ? it.skip : it;

describe('a full disk', () => {
  afterAll(async () => {
    await Promise.all([...running].map((child) => child.stop().catch(() => undefined)));
    running.clear();
    if (disk.path !== null) {
      execFileSync('umount', [disk.path]);
      rmSync(disk.path, { recursive: true, force: true });
    }
  });

  onTmpfs(
    `answers writes 503 and readiness 503 while the disk is full, and recovers once space is freed${disk.reason ? ` (skipped: ${disk.reason})` : ''}`,
    async () => {
      const dataDir = join(disk.path!, 'data');
      const api = await startApi(dataDir, { RESET_REQUESTS_PER_CLIENT: '100000' });
      const ready = () => fetch(`${api.url}/health/ready`);
      for (let status = 0; status !== 200; status = (await ready()).status) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const request = (n: number) =>
        fetch(`${api.url}/api/v1/account/password`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: `user${n}@example.com` }),
        });

      const filler = join(disk.path!, 'filler');
      fill(filler);
      let refused: Response | null = null;
      for (let n = 0; n < 500 && refused === null; n++) {
        const response = await request(n);
        if (response.status !== 202) refused = response;
        else await response.arrayBuffer();
      }
      expect(refused?.status).toBe(503);
      expect(refused?.headers.get('retry-after')).toBe('5');
      expect(await refused!.json()).toMatchObject({ type: 'service-unavailable', status: 503 });

      const full = await ready();
      expect(full.status).toBe(503);
      expect(JSON.stringify(await full.json())).toMatch(
        /cannot be written: SQLITE_FULL: database or disk is full/,
      );

      rmSync(filler);
      let status = 0;
      for (const deadline = Date.now() + 10_000; status !== 200 && Date.now() < deadline;) {
        status = (await ready()).status;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(status).toBe(200);
      expect((await request(1_000_000)).status).toBe(202);
    },
  );
});
