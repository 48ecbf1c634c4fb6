import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@chronicle/event-store';
import Database from 'better-sqlite3';

/** An embedded store in a temporary directory, for the audit's queries to read. */
export interface AuditWorld {
  dir: string;
  store: SqliteEventStore;
  /** Appends one event, written by `actor` within `correlationId`. */
  append(
    stream: string,
    type: string,
    data: Record<string, unknown>,
    meta?: { actor?: string; correlationId?: string },
  ): Promise<void>;
  /** Edits the stored data of the event at `position` behind the store's back: its hash no longer follows. */
  tamper(position: number, from: string, to: string): void;
  close(): Promise<void>;
}

export function auditWorld(): AuditWorld {
  const dir = mkdtempSync(join(tmpdir(), 'audit-'));
  const store = SqliteEventStore.open(dir);
  let written = 0;
  return {
    dir,
    store,
    append: async (stream, type, data, { actor = 'a-admin', correlationId = 'c-1' } = {}) => {
      written += 1;
      await store.append(
        stream,
        [
          {
            id: `00000000-0000-7000-8000-${String(written).padStart(12, '0')}`,
            type,
            data,
            metadata: { actor, correlationId, causationId: null, occurredAt: '2026-11-27T05:00:00.000Z' },
          },
        ],
        'any',
      );
    },
    tamper: (position, from, to) => {
      const db = new Database(join(dir, 'events.db'));
      db.exec('DROP TRIGGER IF EXISTS events_no_update');
      db.prepare('UPDATE events SET data = replace(data, ?, ?) WHERE position = ?').run(from, to, position);
      db.close();
    },
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
