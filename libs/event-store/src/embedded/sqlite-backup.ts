import Database from 'better-sqlite3';
import { basename } from 'node:path';
import { syncFile } from '@chronicle/config';
import { type ChainVerification, verifyChain } from '../integrity/chain-verifier';
import { EVENT_COLUMNS, type EventRow, toChainLink } from './event-row';

/** A copy (or a file to copy) that SQLite finds damaged, or that is not the store it claims to be. */
export class BackupCheckError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`${file}: ${reason}`);
    this.name = 'BackupCheckError';
  }
}

/** What an events.db copy holds: the store it is, and how far its history goes. */
export interface StoreSummary {
  storeId: string;
  /** The last event's position, null for a store with no events. */
  position: string | null;
  events: number;
}

/**
 * Copies a SQLite database that other processes may be writing into `target` (which must not
 * exist) with `VACUUM INTO`: one read transaction, so the copy is the consistent state of one
 * commit, and writers never make it start again (SQLite's stepped backup API restarts on every
 * write from another connection, and never ends under sustained writes). The source is opened
 * read-only. SQLite does not sync the copy: it is synced here before it counts as written.
 */
export function copyLiveDatabase(source: string, target: string): void {
  const db = new Database(source, { readonly: true, fileMustExist: true, timeout: 10_000 });
  try {
    db.prepare('VACUUM INTO ?').run(target);
  } finally {
    db.close();
  }
  syncFile(target);
}

/** `PRAGMA integrity_check` of a database file that nothing else writes; a BackupCheckError if it fails. */
export function checkDatabase(file: string): void {
  const db = openCopy(file);
  let found: string[];
  try {
    const rows = db.pragma('integrity_check') as Array<{ integrity_check: string }>;
    found = rows.map((row) => row.integrity_check).filter((line) => line !== 'ok');
  } catch (error) {
    // A file too damaged to be checked: "file is not a database", "database disk image is malformed".
    found = [(error as Error).message];
  } finally {
    db.close();
  }
  if (found.length > 0) {
    throw new BackupCheckError(file, `SQLite's integrity check failed: ${found.slice(0, 3).join('; ')}`);
  }
}

/** The identity, head and size of an embedded event store file (a copy nothing else writes). */
export function summarizeEventStore(file: string): StoreSummary {
  const db = openCopy(file);
  try {
    const storeId = db.prepare<[], string>('SELECT store_id FROM store_identity WHERE id = 1').pluck().get();
    if (storeId === undefined) throw new BackupCheckError(file, 'records no store identity');
    const { head, events } = db
      .prepare<[], { head: number | null; events: number }>(
        'SELECT max(position) AS head, count(*) AS events FROM events',
      )
      .get()!;
    return { storeId, position: head === null ? null : String(head), events };
  } catch (error) {
    if (error instanceof BackupCheckError) throw error;
    throw new BackupCheckError(file, `is not an event store: ${(error as Error).message}`);
  } finally {
    db.close();
  }
}

/** The hash chain of an events.db copy nothing else writes, walked as `audit verify` walks it. */
export async function verifyCopiedChain(file: string): Promise<ChainVerification> {
  const db = openCopy(file);
  try {
    const rows = db
      .prepare<[], EventRow>(`SELECT ${EVENT_COLUMNS} FROM events ORDER BY position`)
      .raw()
      .iterate();
    return await verifyChain(
      (function* () {
        for (const row of rows) yield toChainLink(row);
      })(),
      'log',
    );
  } finally {
    db.close();
  }
}

function openCopy(file: string): Database.Database {
  try {
    return new Database(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new BackupCheckError(file, `cannot be opened as ${basename(file)}: ${(error as Error).message}`);
  }
}
