import { join } from 'node:path';
import { backupManifestSignedBy, SEAL_KEY_FILE } from '@chronicle/application';
import { type ChainVerification, EVENTS_FILE } from '@chronicle/event-store';
import { BackupError } from './backup-error';
import { BACKUP_MANIFEST, type BackupManifest, UNSIGNED_FORMAT } from './backup-manifest';
import type { RestoreOptions } from './data-dir-backup';

/**
 * The checks a restore makes of a backup's manifest before anything is copied: its signature
 * under the seal key, and the copy's hash chain against the head the manifest recorded.
 */

/** A manifest of format 2 signed with the seal key at hand, or, when told, one that cannot be checked. */
export function checkSignature(source: string, manifest: BackupManifest, options: RestoreOptions): void {
  if (manifest.format === UNSIGNED_FORMAT) {
    if (options.allowUnverified) return;
    throw new BackupError(
      'unsigned-backup',
      `${join(source, BACKUP_MANIFEST)} is of format 1: it records neither the chain's head nor a signature, so ` +
        'nothing shows that its events are the ones backed up. Give --allow-unverified to restore it anyway',
    );
  }
  const { signature, ...unsigned } = manifest;
  if (options.sealKey === null) {
    if (options.allowUnverified) return;
    throw new BackupError(
      'no-seal-key',
      `There is no seal key to check ${join(source, BACKUP_MANIFEST)} with: set AUDIT_SEAL_KEY, or put the kept ` +
        `${SEAL_KEY_FILE} into DATA_DIR first (docs/operations.md). Give --allow-unverified to restore without the check`,
    );
  }
  if (!backupManifestSignedBy(JSON.stringify(unsigned), signature!, options.sealKey)) {
    throw new BackupError(
      'chain-mismatch',
      `${join(source, BACKUP_MANIFEST)} was not signed with this seal key: it was changed after the backup was ` +
        'taken, or signed with another key',
    );
  }
}

/** The backup's chain verifies, and ends at the head its manifest recorded (unless it has none to check). */
export function checkChain(
  source: string,
  manifest: BackupManifest,
  found: ChainVerification,
  options: RestoreOptions,
): void {
  const file = join(source, EVENTS_FILE);
  if (found.broken !== null) {
    // Restored broken only when asked, and only where the backup recorded it broken.
    const recorded = manifest.chain?.broken ?? null;
    if (
      !options.allowBroken ||
      (manifest.chain !== undefined && recorded?.position !== found.broken.position)
    ) {
      throw new BackupError(
        'broken-chain',
        `The hash chain of ${file} breaks at position ${found.broken.position} (${found.broken.reason})` +
          (recorded === null
            ? ': it was edited after the backup was taken'
            : ': the store was backed up broken (--allow-broken); give --allow-broken to restore it as it is'),
      );
    }
  }
  if (manifest.chain === undefined) return;
  const recordedHead = manifest.chain.head;
  const same =
    found.head?.position === recordedHead?.position &&
    found.head?.hash === recordedHead?.hash &&
    (found.head?.hash ?? null) === (manifest.lastRecordHash ?? null);
  if (!same) {
    throw new BackupError(
      'chain-mismatch',
      `The hash chain of ${file} ends at ${found.head?.position ?? 'nothing'} with hash ${found.head?.hash ?? 'none'}, ` +
        `not at the head its manifest recorded (${recordedHead?.position ?? 'nothing'}, ${recordedHead?.hash ?? 'none'})`,
    );
  }
}
