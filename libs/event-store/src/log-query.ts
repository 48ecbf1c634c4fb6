import type { LogQuery, RecordedEvent } from './event-store.port';

/** Whether `event` meets every condition of `query` (its position and limit aside). */
export function matchesLogQuery(event: RecordedEvent, query: Omit<LogQuery, 'after' | 'limit'>): boolean {
  return (
    (query.eventTypes === undefined || query.eventTypes.includes(event.type)) &&
    (query.actor === undefined || event.metadata.actor === query.actor) &&
    (query.correlationId === undefined || event.metadata.correlationId === query.correlationId) &&
    (query.since === undefined || event.recordedAt >= query.since) &&
    (query.until === undefined || event.recordedAt < query.until)
  );
}
