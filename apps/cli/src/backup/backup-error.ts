import { BackupCheckError } from '@chronicle/event-store';

/**
 * The one error of backup and restore: a code the CLI reports (and its tests match) with the
 * message, and the wrapping of the store's own check failures into it.
 */
export type BackupErrorCode =
  | 'not-embedded'
  | 'nothing-to-back-up'
  | 'backup-target-not-empty'
  | 'data-dir-not-empty'
  | 'not-a-backup'
  | 'damaged-backup'
  | 'wrong-store'
  | 'broken-chain'
  | 'chain-mismatch'
  | 'unsigned-backup'
  | 'no-seal-key'
  | 'other-restore-unfinished';

export class BackupError extends Error {
  constructor(
    readonly code: BackupErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'BackupError';
  }
}

/** Runs one of the store's checks, its failure a BackupError with `code`. */
export function checkOrThrow<T>(check: () => T, code: BackupErrorCode): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof BackupCheckError) throw new BackupError(code, error.message);
    throw error;
  }
}
