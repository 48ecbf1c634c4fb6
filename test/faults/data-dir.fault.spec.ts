import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exitWithin, startAppProcess } from '../support/app-process';

/** Every bad DATA_DIR (issue 21 problem 7): one line naming DATA_DIR and the path, exit code 78. */

const scratch = mkdtempSync(join(tmpdir(), 'chronicle-data-dir-'));
const readOnly = join(scratch, 'read-only');

function mountReadOnly(): string {
  try {
    execFileSync('mkdir', ['-p', readOnly]);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,ro,mode=0700', 'tmpfs', readOnly], {
      stdio: 'pipe',
    });
    return '';
  } catch (error) {
    return `mounting a tmpfs is not allowed here: ${String(error).split('\n')[0]}`;
  }
}
const notMounted = mountReadOnly();

afterAll(() => {
  if (!notMounted) execFileSync('umount', [readOnly]);
  rmSync(scratch, { recursive: true, force: true });
});

/** The API's exit within 15 s; a hang is killed and reported as such. */
async function start(dataDir: string): Promise<{ exit: string; output: string }> {
  const api = startAppProcess('api', { DATA_DIR: dataDir, PORT: '0' });
  const exit = await exitWithin(api);
  return { exit, output: api.output().trim() };
}

describe('a bad DATA_DIR', () => {
  const file = join(scratch, 'a-file');
  writeFileSync(file, 'not a directory');

  it.each([
    ['a file', file],
    ['under a file', join(file, 'data')],
    // Where mkdir answers ENOENT under a parent that exists: Node's recursive mkdir looped for ever.
    ['under /proc/self', '/proc/self/nope'],
    ['under /proc', '/proc/nope/data'],
  ])('is %s: one line naming DATA_DIR and the path, exit code 78', async (_case, dataDir) => {
    const { exit, output } = await start(dataDir);
    expect(exit).toBe('code 78');
    expect(output.split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(`^Invalid configuration: DATA_DIR \\(${dataDir}\\) must be a directory`),
      ),
    ]);
  });

  (notMounted ? it.skip : it)(
    `is on a read-only mount: one line naming DATA_DIR and the path, exit code 78${notMounted ? ` (skipped: ${notMounted})` : ''}`,
    async () => {
      const { exit, output } = await start(readOnly);
      expect(exit).toBe('code 78');
      expect(output.split('\n')).toEqual([expect.stringContaining(`DATA_DIR (${readOnly})`)]);
    },
  );
});
