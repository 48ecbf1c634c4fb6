import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { LIMITS_FILE } from '@chronicle/auth';
import { SEAL_KEY_FILE } from '@chronicle/application';
import { makeDirectories, TOKEN_SECRET_FILE } from '@chronicle/config';
import {
  BackupCheckError,
  checkDatabase,
  copyLiveDatabase,
  EVENTS_FILE,
  IDEMPOTENCY_FILE,
  STORE_ID_FILE,
  summarizeEventStore,
  syncFile,
} from '@chronicle/event-store';
import { OUTBOX_DIR } from '@chronicle/mail';
import { controlSocketDir } from '@chronicle/read-models';

/** Written last into a backup: a directory without it is not a (complete) backup. */
export const BACKUP_MANIFEST = 'chronicle-backup.json';
const MANIFEST_FORMAT = 1;

// What a restore needs from DATA_DIR, by how it is copied:
/** SQLite databases that a running server writes: copied online, each in one read transaction. */
const DATABASES = [EVENTS_FILE, LIMITS_FILE];
/** Small files written once, whole. (`store-id` is written from the copied store's own identity.) */
// The seal key too: seals kept elsewhere must still verify against a restored history.
const FILES = [TOKEN_SECRET_FILE, SEAL_KEY_FILE];
/** Folders of files each written whole by a rename; dot files in them are writes under way. */
const FOLDERS = [OUTBOX_DIR];

/**
 * Never needed by a restore: made again by SQLite or by a starting server. Idempotency-Key answers
 * are left out too: they may answer writes made after the copy, which a restore does not bring back.
 */
function isTransient(name: string): boolean {
  return (
    DATABASES.some((database) => name.startsWith(`${database}-`)) ||
    name.startsWith(IDEMPOTENCY_FILE) ||
    name === controlSocketDir('') ||
    name.startsWith('.write-probe-')
  );
}

/** Names a file of a backup may have: one folder level at most, no dot files, nothing that climbs. */
const BACKUP_PATH = /^(?:[A-Za-z0-9_-][A-Za-z0-9._@-]*\/)?[A-Za-z0-9_-][A-Za-z0-9._@-]*$/;

export type BackupErrorCode =
  | 'not-embedded'
  | 'nothing-to-back-up'
  | 'backup-target-not-empty'
  | 'data-dir-not-empty'
  | 'not-a-backup'
  | 'damaged-backup'
  | 'wrong-store';

export class BackupError extends Error {
  constructor(
    readonly code: BackupErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'BackupError';
  }
}

export interface BackupFile {
  /** Relative to the backup (and to DATA_DIR), `/`-separated. */
  path: string;
  bytes: number;
  sha256: string;
}

export interface BackupManifest {
  format: typeof MANIFEST_FORMAT;
  createdAt: string;
  storeId: string;
  /** The last event's position in the copy; null for a store with no events. */
  position: string | null;
  events: number;
  files: BackupFile[];
}

export interface BackupResult extends BackupManifest {
  directory: string;
  /** Entries of DATA_DIR left out: derived data a server makes again, or unknown to this build. */
  skipped: string[];
  notes: string[];
}

export interface RestoreResult {
  dataDir: string;
  storeId: string;
  position: string | null;
  events: number;
  files: string[];
}

/**
 * Copies what a restore of `dataDir` needs into `target` (new or empty), while servers keep
 * writing: the databases by an online copy (one consistent read each), then the secret, the
 * store's identity and the outbox; checks the copies (SQLite's integrity check, the store's
 * identity) and ends with a manifest of every file's size and SHA-256. Files are 0600 in a 0700
 * directory: they hold password hashes and the token secret. A failure leaves no partial backup.
 */
export function backupDataDir(dataDir: string, target: string, now = new Date()): BackupResult {
  if (!existsSync(join(dataDir, EVENTS_FILE))) {
    throw new BackupError(
      'nothing-to-back-up',
      `DATA_DIR (${dataDir}) holds no event store (${EVENTS_FILE}): there is nothing to back up`,
    );
  }
  const undo = claimEmptyDirectory(
    target,
    'backup-target-not-empty',
    `${target} is not empty: back up into a new or an empty directory`,
  );
  try {
    const written: string[] = [];
    for (const name of DATABASES) {
      const source = join(dataDir, name);
      // limits.db is made by the first counted attempt.
      if (!existsSync(source)) continue;
      const copy = join(target, name);
      // Private before SQLite writes into it (VACUUM INTO fills an empty file, keeping its mode).
      closeSync(openSync(copy, 'wx', 0o600));
      copyLiveDatabase(source, copy);
      checkOrThrow(() => checkDatabase(copy), 'damaged-backup');
      written.push(name);
    }
    const summary = checkOrThrow(() => summarizeEventStore(join(target, EVENTS_FILE)), 'damaged-backup');
    const recorded = readIfPresent(join(dataDir, STORE_ID_FILE))?.toString('utf8').trim();
    if (recorded && recorded !== summary.storeId) {
      throw new BackupError(
        'wrong-store',
        `DATA_DIR (${dataDir}): ${EVENTS_FILE} is store ${summary.storeId}, but ${STORE_ID_FILE} says ` +
          `${recorded}; no server would start on it, so it is not backed up`,
      );
    }
    writePrivate(join(target, STORE_ID_FILE), `${summary.storeId}\n`);
    written.push(STORE_ID_FILE);
    for (const name of FILES) {
      const content = readIfPresent(join(dataDir, name));
      if (content === null) continue;
      writePrivate(join(target, name), content);
      written.push(name);
    }
    for (const folder of FOLDERS) {
      const source = join(dataDir, folder);
      if (!existsSync(source)) continue;
      makeDirectories(join(target, folder), 0o700);
      for (const entry of readdirSync(source, { withFileTypes: true })) {
        if (!entry.isFile() || entry.name.startsWith('.')) continue;
        // Gone meanwhile: nothing deletes outbox files but an operator, who may.
        const content = readIfPresent(join(source, entry.name));
        if (content === null) continue;
        writePrivate(join(target, folder, entry.name), content);
        written.push(`${folder}/${entry.name}`);
      }
      syncFile(join(target, folder));
    }
    const manifest: BackupManifest = {
      format: MANIFEST_FORMAT,
      createdAt: now.toISOString(),
      storeId: summary.storeId,
      position: summary.position,
      events: summary.events,
      files: written.map((path) => describeFile(target, path)),
    };
    writePrivate(join(target, BACKUP_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    syncFile(target);
    const kept = new Set<string>([...DATABASES, ...FILES, ...FOLDERS, STORE_ID_FILE]);
    const skipped = readdirSync(dataDir)
      .filter((name) => !kept.has(name) && !isTransient(name))
      .sort();
    const notes = existsSync(join(dataDir, TOKEN_SECRET_FILE))
      ? []
      : [
          `DATA_DIR keeps no ${TOKEN_SECRET_FILE} (TOKEN_SECRET is set): keep that secret with this backup, ` +
            'or every access token ends after a restore',
        ];
    return { directory: target, ...manifest, skipped, notes };
  } catch (error) {
    undo();
    throw error;
  }
}

/**
 * Brings the backup in `source` back into `dataDir`, which must be empty or absent (a server
 * must not be running on it). The backup is checked first (every file's size and SHA-256 against
 * its manifest, SQLite's integrity check, the store's identity); each file is written under a
 * temporary name, synced and renamed, `store-id` last. A failure removes what it wrote.
 */
export function restoreDataDir(source: string, dataDir: string): RestoreResult {
  const manifest = readManifest(source);
  for (const file of manifest.files) {
    const path = join(source, file.path);
    const actual = existsSync(path) ? describeFile(source, file.path) : null;
    if (actual === null || actual.bytes !== file.bytes || actual.sha256 !== file.sha256) {
      throw new BackupError(
        'damaged-backup',
        `${path} is ${actual === null ? 'missing' : 'not the file the backup wrote (its size or SHA-256 differ)'}`,
      );
    }
  }
  const paths = manifest.files.map((file) => file.path);
  for (const name of DATABASES) {
    if (paths.includes(name)) checkOrThrow(() => checkDatabase(join(source, name)), 'damaged-backup');
  }
  const summary = checkOrThrow(() => summarizeEventStore(join(source, EVENTS_FILE)), 'damaged-backup');
  const storeIdFile = readFileSync(join(source, STORE_ID_FILE), 'utf8').trim();
  if (
    summary.storeId !== manifest.storeId ||
    storeIdFile !== manifest.storeId ||
    summary.position !== manifest.position ||
    summary.events !== manifest.events
  ) {
    throw new BackupError(
      'damaged-backup',
      `${join(source, EVENTS_FILE)} is not the store its manifest describes (store ${summary.storeId}, ` +
        `${summary.events} events up to ${summary.position ?? 'none'})`,
    );
  }

  const undo = claimEmptyDirectory(
    dataDir,
    'data-dir-not-empty',
    `DATA_DIR (${dataDir}) is not empty: restore only into an empty or absent directory ` +
      '(stop the server, move the directory aside, then restore)',
  );
  try {
    // store-id last: a DATA_DIR cut short by a crash has none, and `restore` refuses it as not empty.
    const ordered = [...paths.filter((path) => path !== STORE_ID_FILE), STORE_ID_FILE];
    for (const path of ordered) {
      const target = join(dataDir, path);
      makeDirectories(dirname(target), 0o700);
      const temp = join(dirname(target), `.restoring-${process.pid}-${path.replace(/\//g, '_')}`);
      copyPrivate(join(source, path), temp);
      renameSync(temp, target);
      syncFile(dirname(target));
    }
    return {
      dataDir,
      storeId: manifest.storeId,
      position: manifest.position,
      events: manifest.events,
      files: ordered,
    };
  } catch (error) {
    undo();
    throw error;
  }
}

function readManifest(source: string): BackupManifest {
  const file = join(source, BACKUP_MANIFEST);
  const text = readIfPresent(file);
  if (text === null) {
    throw new BackupError(
      'not-a-backup',
      `${source} holds no ${BACKUP_MANIFEST}: it is not a backup made by \`backup DIR\`, or one that did not finish`,
    );
  }
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(text.toString('utf8')) as BackupManifest;
  } catch {
    throw new BackupError('damaged-backup', `${file} is not valid JSON`);
  }
  const files = Array.isArray(manifest?.files) ? manifest.files : null;
  if (
    manifest?.format !== MANIFEST_FORMAT ||
    typeof manifest.storeId !== 'string' ||
    files === null ||
    !files.some((entry) => entry?.path === EVENTS_FILE) ||
    !files.some((entry) => entry?.path === STORE_ID_FILE) ||
    files.some(
      (entry) =>
        typeof entry?.path !== 'string' ||
        !BACKUP_PATH.test(entry.path) ||
        entry.path === BACKUP_MANIFEST ||
        typeof entry.bytes !== 'number' ||
        typeof entry.sha256 !== 'string',
    )
  ) {
    throw new BackupError('damaged-backup', `${file} is not a backup manifest this build can read`);
  }
  return manifest;
}

/**
 * Makes `dir` (0700) or takes it if it exists empty; returns what removes everything written into
 * it since. Anything else in it is the code's error.
 */
function claimEmptyDirectory(dir: string, code: BackupErrorCode, message: string): () => void {
  const existed = existsSync(dir);
  makeDirectories(dir, 0o700);
  if (existed) {
    if (readdirSync(dir).length > 0) throw new BackupError(code, message);
    chmodSync(dir, 0o700);
  }
  return () => {
    if (!existed) {
      rmSync(dir, { recursive: true, force: true });
      return;
    }
    for (const entry of readdirSync(dir)) rmSync(join(dir, entry), { recursive: true, force: true });
  };
}

function checkOrThrow<T>(check: () => T, code: BackupErrorCode): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof BackupCheckError) throw new BackupError(code, error.message);
    throw error;
  }
}

function readIfPresent(file: string): Buffer | null {
  try {
    return readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** A new file, 0600 from its creation, synced. */
function writePrivate(file: string, content: string | Buffer): void {
  writeFileSync(file, content, { mode: 0o600, flag: 'wx' });
  syncFile(file);
}

/** `from` copied into a new file `to`, 0600 (inside a 0700 directory), synced. */
function copyPrivate(from: string, to: string): void {
  copyFileSync(from, to, constants.COPYFILE_EXCL);
  chmodSync(to, 0o600);
  syncFile(to);
}

function describeFile(root: string, path: string): BackupFile {
  const file = join(root, path);
  const hash = createHash('sha256');
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(1024 * 1024);
    for (let read; (read = readSync(fd, buffer, 0, buffer.length, null)) > 0;) {
      hash.update(buffer.subarray(0, read));
    }
  } finally {
    closeSync(fd);
  }
  return { path, bytes: statSync(file).size, sha256: hash.digest('hex') };
}
