import { Query } from '@nestjs/cqrs';
import { ChainBreak, ChainScope, HistoryHead, Position } from '@chronicle/event-store';
import { AuditSeal } from '../audit-seal';

/** What `audit verify` prints (API.md "Command line"). */
export interface HistoryVerification {
  /** The chain holds and, when a seal was given, the history still holds what it sealed. */
  ok: boolean;
  scope: ChainScope;
  events: number;
  head: HistoryHead | null;
  /** The first event whose hash does not follow, or null. */
  broken: ChainBreak | null;
  /**
   * Absent without a seal; else whether it was signed with this key and the history holds it, or
   * holds it as the old head a signed HistoryProtected.v1 recorded (`protection`: that record's
   * position).
   */
  seal?: { position: string; valid: boolean; problem: string | null; protection?: string };
}

/**
 * Walks the hash chain, the whole of it or up to `upTo` (an export's head); with a seal, checks its
 * signature and that the history holds it.
 */
export class VerifyHistoryQuery extends Query<HistoryVerification> {
  constructor(
    readonly seal: AuditSeal | null = null,
    readonly upTo: Position | null = null,
  ) {
    super();
  }
}
