import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import {
  ChainBreak,
  ChainLink,
  chainEncoding,
  comparePositions,
  EventData,
  EventMetadata,
  EventStore,
  GENESIS_HASH,
  LogQuery,
  matchesLogQuery,
  Position,
  RecordedEvent,
  storedLinkBreak,
} from '@chronicle/event-store';
import { AuditRecord, secretFieldsIn, toAuditRecord } from '../audit-record';
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
    const { events, next } =
      filter.stream !== undefined
        ? await this.streamPage(store, filter.stream, filter.after, query, limit)
        : await store.queryLog({ ...query, after: filter.after, limit });
    return this.checked(events, next, filter.withChain === true);
  }

  /**
   * Each event checked against the chain as stored now, as the page is served: an edited event is
   * flagged with why, whatever the reader asked for (upcast or raw). With `withChain`, each record
   * carries the text its hash covers.
   */
  private async checked(
    events: RecordedEvent[],
    next: Position | null,
    withChain: boolean,
  ): Promise<AuditPage> {
    const scope = this.store.chainScope;
    const links = await this.store.readChainLinks(events);
    let broken: ChainBreak | null = null;
    const records = events.map((event, index): AuditRecord => {
      const record: AuditRecord = toAuditRecord(event);
      const found = storedLinkBreak(scope, event, links[index]);
      if (found !== null) {
        broken ??= found;
        record.chainBroken = found.reason;
      }
      const { link, previous } = links[index];
      if (withChain) {
        record.chained =
          link === null || holdsWhatIsNeverShown(link)
            ? null
            : chainEncoding(scope, link, previous?.hash ?? GENESIS_HASH);
      }
      return record;
    });
    return { records, next, broken };
  }

  /** One stream is short: read whole, filtered here with the same conditions. */
  private async streamPage(
    store: EventStore,
    stream: string,
    after: Position | undefined,
    query: Omit<LogQuery, 'after' | 'limit'>,
    limit: number,
  ): Promise<{ events: RecordedEvent[]; next: Position | null }> {
    const matches: RecordedEvent[] = [];
    for (const event of await store.readStream(stream)) {
      if (after && comparePositions(event.position, after) <= 0) continue;
      if (!matchesLogQuery(event, query)) continue;
      // One more than the page holds tells whether a next page exists.
      if (matches.length === limit) return { events: matches, next: matches[limit - 1].position };
      matches.push(event);
    }
    return { events: matches, next: null };
  }
}

/**
 * Whether the stored text holds a secret, or personal values as ciphertext: the audit shows
 * neither (API.md: payloads are plaintext or erased, never ciphertext), so not their chained text.
 */
function holdsWhatIsNeverShown(link: ChainLink): boolean {
  const metadata = JSON.parse(link.metadata) as Partial<EventMetadata>;
  return (
    metadata.personalData === 'encrypted' ||
    secretFieldsIn(link.type, JSON.parse(link.data) as EventData).length > 0
  );
}
