import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import {
  comparePositions,
  EventStore,
  LogQuery,
  matchesLogQuery,
  Position,
  RecordedEvent,
} from '@chronicle/event-store';
import { toAuditRecord } from '../audit-record';
import { AuditPage, ListAuditEventsQuery, MAX_AUDIT_LIMIT } from './list-audit-events.query';

/** The event history from the event store itself (upcast, redacted), never from a read model. */
@QueryHandler(ListAuditEventsQuery)
export class ListAuditEventsHandler implements IQueryHandler<ListAuditEventsQuery, AuditPage> {
  constructor(private readonly store: EventStore) {}

  async execute({ filter, limit }: ListAuditEventsQuery): Promise<AuditPage> {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_AUDIT_LIMIT) {
      throw new RangeError(`limit must be from 1 to ${MAX_AUDIT_LIMIT}`);
    }
    const query = {
      eventTypes: filter.types,
      actor: filter.actor,
      correlationId: filter.correlationId,
      since: filter.since,
      until: filter.until,
    };
    // Raw: the events as stored, before upcasting, through the same queries.
    const store = filter.raw ? this.store.asStored() : this.store;
    if (filter.stream !== undefined) return this.streamPage(store, filter.stream, filter.after, query, limit);
    const { events, next } = await store.queryLog({ ...query, after: filter.after, limit });
    return { records: events.map(toAuditRecord), next };
  }

  /** One stream is short: read whole, filtered here with the same conditions. */
  private async streamPage(
    store: EventStore,
    stream: string,
    after: Position | undefined,
    query: Omit<LogQuery, 'after' | 'limit'>,
    limit: number,
  ): Promise<AuditPage> {
    const matches: RecordedEvent[] = [];
    for (const event of await store.readStream(stream)) {
      if (after && comparePositions(event.position, after) <= 0) continue;
      if (!matchesLogQuery(event, query)) continue;
      // One more than the page holds tells whether a next page exists.
      if (matches.length === limit)
        return { records: matches.map(toAuditRecord), next: matches[limit - 1].position };
      matches.push(event);
    }
    return { records: matches.map(toAuditRecord), next: null };
  }
}
