/** Translation between the port's types and `@eventstore/db-client`'s. */
import {
  ANY,
  type AppendExpectedRevision,
  BACKWARDS,
  END,
  type EventStoreDBClient,
  type EventData as EsdbEventData,
  jsonEvent,
  NO_STREAM,
  type ResolvedEvent,
  STREAM_EXISTS,
} from '@eventstore/db-client';
import type { EventMetadata, ExpectedRevision, NewEvent, RecordedEvent } from '../event-store.port';
import type { ChainLink } from '../integrity/history-chain';
import { formatPosition, type Position } from '../position';

/** System streams and events (`$`-prefixed) are the server's, never the application's. */
export function isSystemEvent(stream: string, type: string): boolean {
  return stream.startsWith('$') || type.startsWith('$');
}

export function toEsdbExpectedRevision(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    case 'any':
      return ANY;
    default:
      return BigInt(expected);
  }
}

/** The event as written, its metadata carrying its hash (chained within its stream) last. */
export function toEsdbEvent(event: NewEvent, hash: string): EsdbEventData {
  return jsonEvent({
    // The caller's id, so a retried append is recognised by the server and not written twice.
    id: event.id,
    type: event.type,
    data: event.data,
    metadata: { ...event.metadata, hash },
  });
}

export function fromEsdbPosition(position: { commit: bigint; prepare: bigint }): Position {
  return { commit: position.commit, prepare: position.prepare };
}

/** The event's position in `$all`; every server since 22.6 sends it, also on stream reads. */
export function positionOf(resolved: ResolvedEvent): Position {
  const position = resolved.event?.position;
  if (!position) {
    throw new Error(
      `Event ${resolved.event?.id ?? '(none)'} came without a $all position (server older than 22.6?)`,
    );
  }
  return fromEsdbPosition(position);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
  );
}

/** Our events are JSON with JSON metadata; anything else in the log is a fault worth failing on. */
export function fromResolvedEvent(resolved: ResolvedEvent): RecordedEvent {
  const event = resolved.event;
  if (!event) throw new Error('A read returned a link to a deleted event');
  if (!event.isJson || !isObject(event.data)) {
    throw new Error(`Event ${event.id} in ${event.streamId} does not hold a JSON object`);
  }
  if (!isObject(event.metadata)) {
    throw new Error(`Event ${event.id} in ${event.streamId} does not hold JSON metadata`);
  }
  // The hash is the store's, not the writer's: it is taken out of the metadata the writer gave.
  const { hash, ...metadata } = event.metadata;
  return {
    id: event.id,
    type: event.type,
    data: event.data,
    metadata: metadata as unknown as EventMetadata,
    stream: event.streamId,
    revision: Number(event.revision),
    position: positionOf(resolved),
    recordedAt: event.created.toISOString(),
    hash: typeof hash === 'string' ? hash : '',
  };
}

/**
 * The event as the stream's chain covers it. The client wrote data and metadata as
 * `JSON.stringify` gave them and parses them on reading; stringifying them again gives the
 * same text (the hash left out of the metadata, where it was added last).
 */
export function toChainLink(event: RecordedEvent): ChainLink {
  return {
    position: formatPosition(event.position),
    id: event.id,
    stream: event.stream,
    revision: event.revision,
    type: event.type,
    data: JSON.stringify(event.data),
    metadata: JSON.stringify(event.metadata),
    recordedAt: event.recordedAt,
    hash: event.hash,
  };
}

/** The position of the log's last record, system records included; null for an empty log. */
export async function readLogEnd(client: EventStoreDBClient): Promise<Position | null> {
  const last: ResolvedEvent[] = [];
  for await (const resolved of client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 })) {
    last.push(resolved);
  }
  return last.length === 0 ? null : positionOf(last[0]);
}

/** gRPC INVALID_ARGUMENT from the server: the client maps it to an UnknownError that keeps the code. */
export function isInvalidArgument(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 3;
}
