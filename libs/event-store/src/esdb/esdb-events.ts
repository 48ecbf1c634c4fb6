/** Translation between the port's types and `@eventstore/db-client`'s. */
import {
  ANY,
  type AppendExpectedRevision,
  type EventData as EsdbEventData,
  jsonEvent,
  NO_STREAM,
  type ResolvedEvent,
  STREAM_EXISTS,
} from '@eventstore/db-client';
import type { EventMetadata, ExpectedRevision, NewEvent, RecordedEvent } from '../event-store.port';
import type { Position } from '../position';

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

export function toEsdbEvent(event: NewEvent): EsdbEventData {
  return jsonEvent({
    // The caller's id, so a retried append is recognised by the server and not written twice.
    id: event.id,
    type: event.type,
    data: event.data,
    metadata: event.metadata as unknown as Record<string, unknown>,
  });
}

/** Same rules as the embedded store, so both adapters refuse the same appends. */
export function validateAppend(stream: string, events: NewEvent[], expected: ExpectedRevision): void {
  if (typeof stream !== 'string' || stream.length === 0 || stream.startsWith('$')) {
    throw new RangeError(`Invalid stream name ${JSON.stringify(stream)}: empty or a system stream ($...)`);
  }
  if (events.length === 0) throw new RangeError(`Stream ${stream}: an append needs at least one event`);
  if (typeof expected === 'number' && (!Number.isSafeInteger(expected) || expected < 0)) {
    throw new RangeError(`Stream ${stream}: invalid expected revision ${expected}`);
  }
  for (const event of events) {
    if (typeof event.id !== 'string' || event.id.length === 0) throw new TypeError('An event needs an id');
    if (typeof event.type !== 'string' || event.type.length === 0) {
      throw new TypeError(`Event ${event.id} needs a type`);
    }
    if (typeof event.data !== 'object' || event.data === null || Array.isArray(event.data)) {
      throw new TypeError(`Event ${event.id}: data must be a JSON object`);
    }
    if (typeof event.metadata !== 'object' || event.metadata === null) {
      throw new TypeError(`Event ${event.id} needs metadata`);
    }
  }
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
  return {
    id: event.id,
    type: event.type,
    data: event.data,
    metadata: event.metadata as unknown as EventMetadata,
    stream: event.streamId,
    revision: Number(event.revision),
    position: positionOf(resolved),
  };
}
