import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeFileDurably, writeFileDurablySync } from './durable-file';

/**
 * In DATA_DIR while `restore` runs: written before its first copy, removed once the erasures of
 * the erasure log are re-applied. A restore cut short in between leaves a DATA_DIR that holds the
 * keys of people erased since the backup: no process opens it while this file is there.
 */
export const RESTORE_MARKER_FILE = 'restore-in-progress';

export interface RestoreMarker {
  /** The backup's directory, absolute. */
  backup: string;
  /** SHA-256 (hex) of the backup's manifest: the same backup, even where it was moved. */
  manifestSha256: string;
  /** When the restore began (ISO 8601). */
  startedAt: string;
}

/** Durably, 0600: a crash leaves it whole or absent, and absent only before anything is copied. */
export function writeRestoreMarker(dataDir: string, marker: RestoreMarker): void {
  writeFileDurablySync(join(dataDir, RESTORE_MARKER_FILE), `${JSON.stringify(marker)}\n`);
}

export function removeRestoreMarker(dataDir: string): Promise<void> {
  return removeFileDurably(join(dataDir, RESTORE_MARKER_FILE));
}

/**
 * The marker in DATA_DIR, null when there is none. One that cannot be read, or does not read as a
 * marker (edited by hand), still says a restore did not finish: its fields are then missing.
 */
export function readRestoreMarker(dataDir: string): Partial<RestoreMarker> | null {
  let text: string;
  try {
    text = readFileSync(join(dataDir, RESTORE_MARKER_FILE), 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? null : {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return {};
  }
  const fields: Partial<RestoreMarker> = {};
  for (const key of ['backup', 'manifestSha256', 'startedAt'] as const) {
    const value = (parsed as Record<string, unknown> | null)?.[key];
    if (typeof value === 'string') fields[key] = value;
  }
  return fields;
}

/** What the marker says of the restore that did not finish, and how to finish it. */
export function unfinishedRestore(dataDir: string, marker: Partial<RestoreMarker>): string {
  const file = join(dataDir, RESTORE_MARKER_FILE);
  const finish =
    marker.backup === undefined
      ? `${file} does not say from which backup: move DATA_DIR aside and restore into an empty one`
      : `run \`restore ${marker.backup}\` again to finish it`;
  return (
    `holds a restore that did not finish (${file}: from ${marker.backup ?? 'an unknown backup'}, begun ` +
    `${marker.startedAt ?? 'at an unknown time'}): the erasures logged since that backup may not be re-applied ` +
    `yet, so people erased since would be served again. Nothing opens it until then: ${finish}`
  );
}
