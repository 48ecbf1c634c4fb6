import { HistoryProtected } from '@chronicle/domain';
import {
  comparePositions,
  EventStore,
  formatPosition,
  parsePosition,
  Position,
} from '@chronicle/event-store';
import { protectionSignedBy } from './audit-seal';

/** A `history protect` as recorded, with its record's position. */
export interface SignedProtection {
  position: string;
  record: HistoryProtected['data'];
}

/**
 * The HistoryProtected.v1 records after `after`, oldest first: only those signed with the seal key
 * `key`, since an unsigned one could be anyone's cover for a rewritten history.
 */
export async function* signedProtections(
  store: EventStore,
  key: Buffer,
  after?: Position,
): AsyncGenerator<SignedProtection> {
  for await (const event of store.readAll({ after, eventTypes: ['HistoryProtected.v1'] })) {
    const record = event.data as HistoryProtected['data'];
    if (protectionSignedBy(record.oldHead, record.newHead, record.signature, key)) {
      yield { position: formatPosition(event.position), record };
    }
  }
}

/** Whether the protection re-chained the event at `at`: from its first changed event to its old head. */
export function rechainedBy({ record }: SignedProtection, at: string): boolean {
  const [event, from, to] = [at, record.firstChanged, record.oldHead.position].map(parsePosition);
  if (event === null || from === null || to === null) return false;
  return comparePositions(from, event) <= 0 && comparePositions(event, to) <= 0;
}
