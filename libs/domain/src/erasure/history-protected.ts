import { DomainEvent } from '../shared/event';

/** A head of the history: its last position, that event's chained hash and its recorded time. */
export interface RecordedHead {
  position: string;
  hash: string;
  recordedAt: string;
}

/**
 * `history protect` encrypted the personal values a store held in plaintext (written before they
 * were encrypted) and re-chained the history from the first event it changed (API.md "Personal
 * data"). `oldHead` is the head before, against which a seal taken before is checked; `newHead` the
 * re-chained head this event chains to; `events` the events whose values it encrypted, of which
 * `erasedSubjectEvents` belonged to subjects already erased (their values became null).
 * `signature`: both heads signed under the audit seal key, so that no one without it can forge
 * such a record to pass a rewritten history off against a seal.
 */
export type HistoryProtected = DomainEvent<
  'HistoryProtected.v1',
  {
    oldHead: RecordedHead;
    newHead: RecordedHead;
    firstChanged: string;
    events: number;
    erasedSubjectEvents: number;
    signature: string;
  }
>;

/** The record of each `history protect` (HistoryProtected.v1). */
export const HISTORY_PROTECTION_STREAM = 'historyprotection';
