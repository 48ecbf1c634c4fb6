import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { comparePositions, EventStore, Position, RecordedEvent } from '@chronicle/event-store';
import { toAuditRecord } from '../audit-record';
import { AuditFilter, AuditPage, ListAuditEventsQuery, MAX_AUDIT_LIMIT } from './list-audit-events.query';

/**
 * Most events one page reads when filtering by type or actor without a stream: a rare type must
 * not make one request read the whole history. The page then ends early with a next link.
 */
export const AUDIT_SCAN_BUDGET = 50_000;

/** The event history from the event store itself (upcast, redacted), never from a read model. */
@QueryHandler(ListAuditEventsQuery)
export class ListAuditEventsHandler implements IQueryHandler<ListAuditEventsQuery, AuditPage> {
  constructor(private readonly store: EventStore) {}

  async execute({ filter, limit }: ListAuditEventsQuery): Promise<AuditPage> {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_AUDIT_LIMIT) {
      throw new RangeError(`limit must be from 1 to ${MAX_AUDIT_LIMIT}`);
    }
    const store = filter.raw ? this.store.asStored() : this.store;
    const events: AsyncIterable<RecordedEvent> | RecordedEvent[] =
      filter.stream === undefined
        ? store.readAll(filter.after ? { after: filter.after } : {})
        : await store.readStream(filter.stream);
    const matches: RecordedEvent[] = [];
    let scanned = 0;
    let last: Position | null = null;
    for await (const event of events) {
      if (filter.after && comparePositions(event.position, filter.after) <= 0) continue;
      last = event.position;
      if (matchesFilter(event, filter)) {
        // One more than the page holds tells whether a next page exists.
        if (matches.length === limit)
          return { records: matches.map(toAuditRecord), next: matches[limit - 1].position };
        matches.push(event);
      }
      if (++scanned >= AUDIT_SCAN_BUDGET && filter.stream === undefined) {
        return { records: matches.map(toAuditRecord), next: last };
      }
    }
    return { records: matches.map(toAuditRecord), next: null };
  }
}

function matchesFilter(event: RecordedEvent, filter: AuditFilter): boolean {
  return (
    (filter.type === undefined || event.type === filter.type) &&
    (filter.actor === undefined || event.metadata.actor === filter.actor)
  );
}
