import type { RecordedEvent } from '../event-store.port';
import type { ChainLink } from '../integrity/history-chain';

/** One `events` row as read in raw mode: column order of {@link EVENT_COLUMNS}. */
export type EventRow = [
  position: number,
  id: string,
  stream: string,
  revision: number,
  type: string,
  data: string,
  metadata: string,
  recordedAt: string,
  hash: string,
];

export const EVENT_COLUMNS = 'position, id, stream, revision, type, data, metadata, recorded_at, hash';

export function toRecordedEvent(row: EventRow): RecordedEvent {
  const position = BigInt(row[0]);
  return {
    id: row[1],
    stream: row[2],
    revision: row[3],
    type: row[4],
    data: JSON.parse(row[5]) as RecordedEvent['data'],
    metadata: JSON.parse(row[6]) as RecordedEvent['metadata'],
    position: { commit: position, prepare: position },
    recordedAt: row[7],
    hash: row[8],
  };
}

/** The row as the hash chain covers it: its texts as stored, nothing parsed. */
export function toChainLink(row: EventRow): ChainLink {
  return {
    position: String(row[0]),
    id: row[1],
    stream: row[2],
    revision: row[3],
    type: row[4],
    data: row[5],
    metadata: row[6],
    recordedAt: row[7],
    hash: row[8],
  };
}
