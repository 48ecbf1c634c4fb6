import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  fsyncSync,
  openSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { type FileHandle, mkdir, open, rename, rm, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Files written here hold secrets, hashes and reset links: readable by their owner only. */
const PRIVATE_FILE = 0o600;

export interface DurableWriteOptions {
  /** A dot file while it is written: readers that skip dot files (the outbox's) never see it. */
  hidden?: boolean;
}

export interface AsyncDurableWriteOptions extends DurableWriteOptions {
  /** Asked once the content is flushed: false leaves `file` as it was (the content went stale). */
  keep?: () => boolean;
}

/** Flushes a file (or a directory's entries) to the disk. */
export function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Where `file` is written before its rename: beside it (a rename stays within one file system),
 * `<name>.<pid>.<random>.tmp`, so that a clean-up can tell a dead process's leftovers from a live one's.
 */
export function temporaryFileFor(file: string, options: DurableWriteOptions = {}): string {
  const name = `${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  return join(dirname(file), options.hidden ? `.${name}` : name);
}

/**
 * Writes `file` whole or not at all, 0600: into a new temporary file beside it, flushed, renamed
 * over `file`, then the directory flushed so that the rename itself survives a crash. A crash
 * leaves the old content or the new, never a mix or an empty file; a failure removes the
 * temporary file. `copyOf` copies a file's content (the kernel's copy, not through memory).
 */
export function writeFileDurablySync(
  file: string,
  content: string | Uint8Array | { copyOf: string },
  options: DurableWriteOptions = {},
): void {
  const temp = temporaryFileFor(file, options);
  try {
    if (typeof content === 'string' || content instanceof Uint8Array) {
      writeFileSync(temp, content, { mode: PRIVATE_FILE, flag: 'wx' });
    } else {
      copyFileSync(content.copyOf, temp, constants.COPYFILE_EXCL);
      chmodSync(temp, PRIVATE_FILE);
    }
    syncFile(temp);
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  syncFile(dirname(file));
}

/**
 * `writeFileDurablySync` without blocking the event loop: `content` may be a function that writes
 * into the open temporary file as the content comes. Resolves whether `file` was written (`keep`
 * may say no once the content is flushed).
 */
export async function writeFileDurably(
  file: string,
  content: string | Uint8Array | ((handle: FileHandle) => Promise<void>),
  options: AsyncDurableWriteOptions = {},
): Promise<boolean> {
  const temp = temporaryFileFor(file, options);
  let renamed = false;
  try {
    const handle = await open(temp, 'wx', PRIVATE_FILE);
    try {
      if (typeof content === 'function') await content(handle);
      else await handle.writeFile(content);
      // Flushed before the rename, so a crash cannot leave an empty file under the final name.
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (options.keep && !options.keep()) return false;
    await rename(temp, file);
    renamed = true;
  } finally {
    if (!renamed) await rm(temp, { force: true }).catch(() => undefined);
  }
  await syncDirectory(dirname(file));
  return true;
}

/**
 * Appends `line` (one line, without its newline) to `file`, 0600, made with its directory (0700)
 * when missing, and resolves once it is on disk: the file flushed, and the directory too when the
 * file was new. A line cut short by a crash is ended before the next, so it never joins it.
 */
export async function appendLineDurably(file: string, line: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const handle = await open(file, 'a+', PRIVATE_FILE);
  let created: boolean;
  try {
    const { size } = await handle.stat();
    created = size === 0;
    const last = Buffer.alloc(1);
    if (size > 0) await handle.read(last, 0, 1, size - 1);
    const torn = size > 0 && last[0] !== 0x0a;
    // One write: appends of other processes land before or after it, never inside.
    await handle.write(`${torn ? '\n' : ''}${line}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  if (created) await syncDirectory(dirname(file));
}

/** Deletes `file` (absent: nothing to do), durably: the directory's entry is gone from disk too. */
export async function removeFileDurably(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await syncDirectory(dirname(file));
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
