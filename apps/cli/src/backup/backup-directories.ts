import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeDirectories, RESTORE_MARKER_FILE, removeRestoreMarker, syncFile } from '@chronicle/config';
import { BackupError, type BackupErrorCode } from './backup-error';

/**
 * The file work of backup and restore: claiming an empty directory and undoing what was written
 * into it, and reading and writing the files they copy, private and synced.
 */

/**
 * Makes `dir` (0700) or takes it if it exists empty; returns what removes everything written into
 * it since. Anything else in it is the code's error.
 */
export function claimEmptyDirectory(
  dir: string,
  code: BackupErrorCode,
  message: string,
  allowed: readonly string[] = [],
): () => Promise<void> {
  const existed = existsSync(dir);
  makeDirectories(dir, 0o700);
  if (existed) {
    if (readdirSync(dir).some((entry) => !allowed.includes(entry))) throw new BackupError(code, message);
    chmodSync(dir, 0o700);
  }
  return () => emptyDirectory(dir, existed, allowed);
}

/**
 * Removes everything in `dir` but `kept` (and `dir` itself unless `keepDir`); a restore's marker
 * last, once the rest is gone from the disk, so that a crash meanwhile never leaves restored files
 * without it.
 */
export async function emptyDirectory(dir: string, keepDir: boolean, kept: readonly string[]): Promise<void> {
  removeAllBut(dir, [...kept, RESTORE_MARKER_FILE]);
  await removeRestoreMarker(dir);
  if (!keepDir) rmSync(dir, { recursive: true, force: true });
}

/** Removes every entry of `dir` but `kept`, durably. */
export function removeAllBut(dir: string, kept: readonly string[]): void {
  for (const entry of readdirSync(dir)) {
    if (!kept.includes(entry)) rmSync(join(dir, entry), { recursive: true, force: true });
  }
  syncFile(dir);
}

/** The file's bytes, null when it does not exist. */
export function readIfPresent(file: string): Buffer | null {
  try {
    return readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** A new file, 0600 from its creation, synced. */
export function writePrivate(file: string, content: string | Buffer): void {
  writeFileSync(file, content, { mode: 0o600, flag: 'wx' });
  syncFile(file);
}
