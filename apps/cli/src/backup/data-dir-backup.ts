import { closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { LIMITS_FILE } from '@chronicle/auth';
import { ReappliedErasures, SEAL_KEY_FILE, signBackupManifest } from '@chronicle/application';
import {
  makeDirectories,
  readRestoreMarker,
  removeRestoreMarker,
  RESTORE_MARKER_FILE,
  syncFile,
  TOKEN_SECRET_FILE,
  unfinishedRestore,
  writeFileDurablySync,
  writeRestoreMarker,
} from '@chronicle/config';
import {
  checkDatabase,
  copyLiveDatabase,
  DATA_KEY_SECRET_FILE,
  DATA_KEYS_FILE,
  EVENTS_FILE,
  IDEMPOTENCY_FILE,
  STORE_ID_FILE,
  summarizeEventStore,
  verifyCopiedChain,
} from '@chronicle/event-store';
import { OUTBOX_DIR } from '@chronicle/mail';
import { controlSocketDir } from '@chronicle/read-models';
import { BackupError, checkOrThrow } from './backup-error';
import {
  claimEmptyDirectory,
  emptyDirectory,
  readIfPresent,
  removeAllBut,
  writePrivate,
} from './backup-directories';
import {
  BACKUP_MANIFEST,
  backupChain,
  type BackupManifest,
  describeFile,
  MANIFEST_FORMAT,
  readManifest,
} from './backup-manifest';
import { checkChain, checkSignature } from './backup-verification';

// What a restore needs from DATA_DIR, by how it is copied:
/**
 * SQLite databases that a running server writes: copied online, each in one read transaction. The
 * data keys after the events: a key is kept before any event is written under it, so the copy
 * holds the key of every event copied (an erasure in between is re-applied by `restore`).
 */
const DATABASES = [EVENTS_FILE, DATA_KEYS_FILE, LIMITS_FILE];
/** Small files written once, whole. (`store-id` is written from the copied store's own identity.) */
const FILES = [TOKEN_SECRET_FILE, DATA_KEY_SECRET_FILE];
// Never the seal key: whoever holds a backup could sign seals and manifests of a rewritten history.
// It is kept apart from the data (docs/operations.md), and a restore finds it where the server does.
const KEPT_APART = [SEAL_KEY_FILE];
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

export interface BackupOptions {
  /** Signs the manifest: the seal key (AUDIT_SEAL_KEY, or DATA_DIR/audit-seal-key). */
  sealKey: Buffer;
  /** Back up a store whose chain breaks, recording `chain.ok: false`, instead of refusing. */
  allowBroken?: boolean;
  now?: Date;
}

export interface RestoreOptions {
  /** The seal key the manifest was signed with; null when none is set or kept. */
  sealKey: Buffer | null;
  /** Restore a store whose chain breaks where its manifest recorded it broken. */
  allowBroken?: boolean;
  /** Restore without checking the manifest's signature: no seal key, or a backup of format 1. */
  allowUnverified?: boolean;
  /**
   * Re-applies the erasures logged since (ERASURE_LOG) once the files are in place; a failure
   * removes what the restore wrote, as any other would.
   */
  eraseAgain?: () => Promise<ReappliedErasures>;
  /** When the restore begins, as its marker records it. */
  now?: Date;
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
  /** What `eraseAgain` did. */
  erasures?: ReappliedErasures;
  /**
   * Set when this run finished a restore of the same backup cut short (its marker was in DATA_DIR):
   * when that one began. `files` is then empty when its copy was whole: kept as it was, as it may
   * hold erasures already re-applied, and only the erasures re-applied.
   */
  resumed?: { startedAt: string | null };
}

/**
 * Copies what a restore of `dataDir` needs into `target` (new or empty), while servers keep
 * writing: the databases by an online copy (one consistent read each), then the secret, the
 * store's identity and the outbox; checks the copies (SQLite's integrity check, the store's
 * identity, its hash chain: a broken one is refused unless `allowBroken`) and ends with a manifest of
 * every file's size and SHA-256 and the chain's head, signed with the seal key, which is never
 * copied. Files are 0600 in a 0700 directory: they hold password hashes and the token secret. A
 * failure leaves no partial backup.
 */
export async function backupDataDir(
  dataDir: string,
  target: string,
  { sealKey, allowBroken = false, now = new Date() }: BackupOptions,
): Promise<BackupResult> {
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
    const chain = backupChain(await verifyCopiedChain(join(target, EVENTS_FILE)));
    if (chain.broken !== null && !allowBroken) {
      throw new BackupError(
        'broken-chain',
        `The hash chain of ${EVENTS_FILE} breaks at position ${chain.broken.position} (${chain.broken.reason}): ` +
          'the history was edited outside the service, so it is not backed up. Give --allow-broken to back it up ' +
          'as it is (the manifest then records chain.ok: false)',
      );
    }
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
    const unsigned: BackupManifest = {
      format: MANIFEST_FORMAT,
      createdAt: now.toISOString(),
      storeId: summary.storeId,
      position: summary.position,
      events: summary.events,
      lastRecordHash: chain.head?.hash ?? null,
      chain,
      files: written.map((path) => describeFile(target, path)),
    };
    const manifest = { ...unsigned, signature: signBackupManifest(JSON.stringify(unsigned), sealKey) };
    writePrivate(join(target, BACKUP_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    syncFile(target);
    const kept = new Set<string>([...DATABASES, ...FILES, ...FOLDERS, ...KEPT_APART, STORE_ID_FILE]);
    const skipped = readdirSync(dataDir)
      .filter((name) => !kept.has(name) && !isTransient(name))
      .sort();
    const notes: string[] = [];
    if (!existsSync(join(dataDir, TOKEN_SECRET_FILE))) {
      notes.push(
        `DATA_DIR keeps no ${TOKEN_SECRET_FILE} (TOKEN_SECRET is set): keep that secret with this backup, ` +
          'or every access token ends after a restore',
      );
    }
    if (written.includes(DATA_KEYS_FILE) && !written.includes(DATA_KEY_SECRET_FILE)) {
      notes.push(
        `DATA_DIR keeps no ${DATA_KEY_SECRET_FILE} (DATA_KEY_SECRET is set): keep that secret with this backup, ` +
          `or no personal value in it can be read after a restore (the keys in ${DATA_KEYS_FILE} are wrapped under it)`,
      );
    }
    if (existsSync(join(dataDir, SEAL_KEY_FILE))) {
      notes.push(
        `${SEAL_KEY_FILE} is not in the backup, so that the backup alone cannot sign: keep a copy of it apart ` +
          'from the backups (docs/operations.md); a restore needs it to check this manifest',
      );
    }
    if (chain.broken !== null) {
      notes.push(
        `The hash chain breaks at position ${chain.broken.position}: backed up as it is (--allow-broken)`,
      );
    }
    return { directory: target, ...manifest, skipped, notes };
  } catch (error) {
    await undo();
    throw error;
  }
}

/**
 * Brings the backup in `source` back into `dataDir`, which must be empty, absent, or hold only the
 * kept seal key (a server must not be running on it). The backup is checked first (every file's
 * size and SHA-256 against its manifest, the manifest's signature under the seal key, SQLite's
 * integrity check, the store's identity, its hash chain against the head the manifest recorded);
 * then the restore's marker is written, each file under a temporary name, synced and renamed,
 * `store-id` last; then the erasures logged since are re-applied (`eraseAgain`), and the marker
 * removed. A `dataDir` holding the marker of a restore of the same backup cut short is finished:
 * copied again if its copy was not whole, else kept as it is (it may hold erasures re-applied
 * since). A failure removes what the restore wrote.
 */
export async function restoreDataDir(
  source: string,
  dataDir: string,
  options: RestoreOptions,
): Promise<RestoreResult> {
  const { manifest, sha256: manifestSha256 } = readManifest(source);
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
  checkSignature(source, manifest, options);
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
  checkChain(source, manifest, await verifyCopiedChain(join(source, EVENTS_FILE)), options);

  const earlier = existsSync(dataDir) ? readRestoreMarker(dataDir) : null;
  let undo: () => Promise<void>;
  if (earlier === null) {
    undo = claimEmptyDirectory(
      dataDir,
      'data-dir-not-empty',
      `DATA_DIR (${dataDir}) is not empty: restore only into an empty or absent directory, or one that holds ` +
        `only ${SEAL_KEY_FILE} (stop the server, move the directory aside, then restore)`,
      KEPT_APART,
    );
  } else {
    if (earlier.manifestSha256 !== manifestSha256) {
      throw new BackupError(
        'other-restore-unfinished',
        `DATA_DIR (${dataDir}) ${unfinishedRestore(dataDir, earlier)}; ${source} is not the backup it names. To restore ` +
          'this one instead, move DATA_DIR aside and restore into an empty directory',
      );
    }
    undo = () => emptyDirectory(dataDir, true, KEPT_APART);
  }
  try {
    // store-id last: a copy cut short by a crash has none, and a restore of it is copied again.
    const ordered = [...paths.filter((path) => path !== STORE_ID_FILE), STORE_ID_FILE];
    const copiedBefore = earlier !== null && existsSync(join(dataDir, STORE_ID_FILE));
    if (!copiedBefore) {
      // Before the first copy: until it is removed, no process opens DATA_DIR (parseConfig).
      if (earlier === null) {
        writeRestoreMarker(dataDir, {
          backup: source,
          manifestSha256,
          startedAt: (options.now ?? new Date()).toISOString(),
        });
      } else {
        // What the cut-short copy left, the files it had renamed and its temporary files.
        removeAllBut(dataDir, [...KEPT_APART, RESTORE_MARKER_FILE]);
      }
      for (const path of ordered) {
        const target = join(dataDir, path);
        makeDirectories(dirname(target), 0o700);
        writeFileDurablySync(target, { copyOf: join(source, path) }, { hidden: true });
      }
    }
    const erasures = await options.eraseAgain?.();
    await removeRestoreMarker(dataDir);
    return {
      dataDir,
      storeId: manifest.storeId,
      position: manifest.position,
      events: manifest.events,
      files: copiedBefore ? [] : ordered,
      ...(erasures === undefined ? {} : { erasures }),
      ...(earlier === null ? {} : { resumed: { startedAt: earlier.startedAt ?? null } }),
    };
  } catch (error) {
    await undo();
    throw error;
  }
}
