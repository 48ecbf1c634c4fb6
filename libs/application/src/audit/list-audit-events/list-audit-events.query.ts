import { Query } from '@nestjs/cqrs';
import { ChainBreak, Position } from '@chronicle/event-store';
import { parseRfc3339 } from '../../shared/rfc-3339';
import { AuditRecord } from '../audit-record';

export const DEFAULT_AUDIT_LIMIT = 100;

/**
 * An RFC 3339 time as the store keeps recorded times (UTC with milliseconds), or null when it is
 * none (parseRfc3339).
 */
export function auditTime(text: string): string | null {
  return parseRfc3339(text)?.toISOString() ?? null;
}
export const MAX_AUDIT_LIMIT = 1000;

export interface AuditFilter {
  stream?: string;
  /** Any of these types (upcast: a stored older version of one counts as it). */
  types?: readonly string[];
  actor?: string;
  correlationId?: string;
  /** RFC 3339 UTC with milliseconds: since <= recordedAt < until. */
  since?: string;
  until?: string;
  /** Exclusive: only events after this position. */
  after?: Position;
  /** Events as stored, before upcasting (types and data of older versions as they were written). */
  raw?: boolean;
  /** Each record with the text its hash covers (`chained`), to recompute the hash. */
  withChain?: boolean;
}

export interface AuditPage {
  /** Oldest first. */
  records: AuditRecord[];
  /**
   * Where the next page starts (its `after`), or null at the end of the history. A page is
   * filled up to the limit or the head; only on EventStoreDB, which cannot filter by metadata,
   * may a scan's time budget end one shorter, with a next page.
   */
  next: Position | null;
  /** The first record of the page whose hash does not follow from its content and predecessor. */
  broken: ChainBreak | null;
}

export class ListAuditEventsQuery extends Query<AuditPage> {
  constructor(
    readonly filter: AuditFilter,
    /** 1 to MAX_AUDIT_LIMIT. */
    readonly limit: number,
  ) {
    super();
  }
}
