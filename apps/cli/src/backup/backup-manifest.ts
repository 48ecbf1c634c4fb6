import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type ChainVerification, EVENTS_FILE, STORE_ID_FILE } from '@chronicle/event-store';
import { BackupError } from './backup-error';
import { readIfPresent } from './backup-directories';

/**
 * A backup's manifest: its format, what it records (every file's size and SHA-256, the store,
 * the chain's head), and reading it back, shape-checked, from a backup directory.
 */

/** Written last into a backup: a directory without it is not a (complete) backup. */
export const BACKUP_MANIFEST = 'chronicle-backup.json';
/** 2: with the chain's head and a signature under the seal key. 1: neither (restored only when told). */
export const MANIFEST_FORMAT = 2;
export const UNSIGNED_FORMAT = 1;

/** Names a file of a backup may have: one folder level at most, no dot files, nothing that climbs. */
const BACKUP_PATH = /^(?:[A-Za-z0-9_-][A-Za-z0-9._@-]*\/)?[A-Za-z0-9_-][A-Za-z0-9._@-]*$/;

export interface BackupFile {
  /** Relative to the backup (and to DATA_DIR), `/`-separated. */
  path: string;
  bytes: number;
  sha256: string;
}

/** What `audit verify` says of the copy's chain. */
export type BackupChain = Omit<ChainVerification, 'sealMismatch' | 'last'> & { ok: boolean };

export interface BackupManifest {
  format: typeof MANIFEST_FORMAT | typeof UNSIGNED_FORMAT;
  createdAt: string;
  storeId: string;
  /** The last event's position in the copy; null for a store with no events. */
  position: string | null;
  events: number;
  /** The last event's own hash, the chain's head on the embedded store (format 2). */
  lastRecordHash?: string | null;
  /** The copy's chain as verified when it was taken (format 2). */
  chain?: BackupChain;
  files: BackupFile[];
  /** HMAC-SHA256 (hex) under the seal key of the manifest's JSON without it (format 2). */
  signature?: string;
}

/** The manifest's record of the copy's chain, from its verification. */
export function backupChain(verification: ChainVerification): BackupChain {
  const { scope, events, head, broken } = verification;
  return { ok: broken === null, scope, events, head, broken };
}

/** The manifest of the backup in `source`, and the SHA-256 (hex) of its bytes. */
export function readManifest(source: string): { manifest: BackupManifest; sha256: string } {
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
    (manifest?.format !== MANIFEST_FORMAT && manifest?.format !== UNSIGNED_FORMAT) ||
    (manifest.format === MANIFEST_FORMAT &&
      (typeof manifest.signature !== 'string' ||
        typeof manifest.chain !== 'object' ||
        manifest.chain === null)) ||
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
  return { manifest, sha256: createHash('sha256').update(text).digest('hex') };
}

/** `path` under `root` as the manifest records it: its size and SHA-256. */
export function describeFile(root: string, path: string): BackupFile {
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
