import type { RecordedEvent } from '../event-store.port';

/** One `events` row as read in raw mode: column order of {@link EVENT_COLUMNS}. */
export type EventRow = [
  position: number,
  id: string,
  stream: string,
  revision: number,
  type: string,
  data: string,
  metadata: string,
];

export const EVENT_COLUMNS = 'position, id, stream, revision, type, data, metadata';

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
  };
}
