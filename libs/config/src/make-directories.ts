import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * `mkdir -p` with `mode` for the directories it creates. Not Node's `recursive: true`: where mkdir
 * answers ENOENT under a parent that exists (`/proc/self/x`), Node 20 retries it for ever, and
 * start-up hung silently. Here that ENOENT is thrown, like any other error.
 */
export function makeDirectories(path: string, mode: number): void {
  const missing: string[] = [];
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    const stat = statSync(dir, { throwIfNoEntry: false });
    if (stat !== undefined) {
      if (!stat.isDirectory()) {
        throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${path}'`), { code: 'ENOTDIR' });
      }
      break;
    }
    missing.push(dir);
    if (dirname(dir) === dir) break;
  }
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir, { mode });
    } catch (error) {
      // Made meanwhile by another process starting on the same path.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(dir).isDirectory()) throw error;
    }
  }
}
