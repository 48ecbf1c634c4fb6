import { HistoryProtected } from '@chronicle/domain';
import {
  comparePositions,
  EventStore,
  formatPosition,
  parsePosition,
  Position,
  type HistoryRewriteSummary,
} from '@chronicle/event-store';
import { protectionSignedBy, signProtection } from './audit-seal';

/** What a rewrite or a copy records in HistoryProtected.v1, all but the signature. */
export function protectionOf(summary: HistoryRewriteSummary): Omit<HistoryProtected['data'], 'signature'> {
  const { oldHead, newHead, firstChanged, changed, erased } = summary;
  return { oldHead, newHead, firstChanged, events: changed, erasedSubjectEvents: erased };
}

/** HistoryProtected.v1 of a rewrite or a copy: both heads, signed together under the seal key `key`. */
export function protectionRecord(summary: HistoryRewriteSummary, key: Buffer): HistoryProtected {
  const protection = protectionOf(summary);
  return {
    type: 'HistoryProtected.v1',
    data: { ...protection, signature: signProtection(protection.oldHead, protection.newHead, key) },
  };
}

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
