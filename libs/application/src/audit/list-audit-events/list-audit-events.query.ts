import { Query } from '@nestjs/cqrs';
import { Position } from '@chronicle/event-store';
import { AuditRecord } from '../audit-record';

export const DEFAULT_AUDIT_LIMIT = 100;
export const MAX_AUDIT_LIMIT = 1000;

export interface AuditFilter {
  stream?: string;
  type?: string;
  actor?: string;
  /** Exclusive: only events after this position. */
  after?: Position;
  /** Events as stored, before upcasting (types and data of older versions as they were written). */
  raw?: boolean;
}

export interface AuditPage {
  /** Oldest first. */
  records: AuditRecord[];
  /**
   * Where the next page starts (its `after`), or null at the end of the history. A page may be
   * shorter than the limit and still have a next page when a scan reached its budget.
   */
  next: Position | null;
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
