import type Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileDurablySync } from '@chronicle/config';

/**
 * The embedded store's identity: recorded in events.db and in `store-id` beside it when the store
 * is created, and checked at every open, so that a DATA_DIR whose events.db went missing, was
 * emptied or replaced is refused instead of served as if it were the same history.
 */

/** Beside events.db: the identity recorded when the store was created. */
export const STORE_ID_FILE = 'store-id';

/**
 * DATA_DIR holds a store's identity but not that store: events.db is missing, empty or another
 * store's. Starting on it would serve an empty or a foreign history as if it were this one.
 */
export class StoreLostError extends Error {
  constructor(
    readonly dataDir: string,
    reason: string,
  ) {
    super(
      `DATA_DIR (${dataDir}): ${reason}. The event history is not where it was: restore it from a backup ` +
        `(\`restore DIR\`), or, to start an empty store on purpose, remove ${join(dataDir, STORE_ID_FILE)}.`,
    );
    this.name = 'StoreLostError';
  }
}

/** The identity DATA_DIR's `store-id` records, null when there is none. */
export function readStoreId(dataDir: string): string | null {
  try {
    return readFileSync(join(dataDir, STORE_ID_FILE), 'utf8').trim() || null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Before `file` (events.db) is opened, which creates it: the identity DATA_DIR records, after
 * checking that a recorded store still has a file that is not empty.
 */
export function recordedStoreId(dataDir: string, file: string): string | null {
  const recorded = readStoreId(dataDir);
  const size = statSync(file, { throwIfNoEntry: false })?.size;
  if (recorded !== null && !size) {
    throw new StoreLostError(
      dataDir,
      `${file} is ${size === undefined ? 'missing' : 'empty (0 bytes)'}, but ${STORE_ID_FILE} says store ${recorded} was created here`,
    );
  }
  return recorded;
}

/**
 * The store's identity, in events.db (`file`) first, then in `store-id` (a crash in between leaves
 * only the first, which the next open completes). A store from before identities takes the one recorded.
 */
export function recordIdentity(
  db: Database.Database,
  dataDir: string,
  file: string,
  recorded: string | null,
): void {
  const stored = db.prepare<[], string>('SELECT store_id FROM store_identity WHERE id = 1').pluck().get();
  if (stored !== undefined && recorded !== null && stored !== recorded) {
    throw new StoreLostError(
      dataDir,
      `${file} is store ${stored}, but ${STORE_ID_FILE} says store ${recorded} was created here`,
    );
  }
  // Two processes opening a new store together agree on the first one's identity.
  if (stored === undefined) {
    db.prepare('INSERT OR IGNORE INTO store_identity (id, store_id) VALUES (1, ?)').run(
      recorded ?? randomUUID(),
    );
  }
  const id = db.prepare<[], string>('SELECT store_id FROM store_identity WHERE id = 1').pluck().get()!;
  if (recorded !== null) return;
  // Whole or not at all: a store-id left empty by a crash reads as none, which would turn the check
  // above off for good. Processes opening a new store together write the same identity.
  writeFileDurablySync(join(dataDir, STORE_ID_FILE), `${id}\n`);
}
