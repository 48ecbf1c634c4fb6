import { randomUUID } from 'node:crypto';
import type { EventData, NewEvent, RecordedEvent } from './event-store.port';
import { position } from './position';

/** An event to append in the event store's specs: fixed metadata, a fresh id unless given. */
export function newEvent(type = 'Tested.v1', data: EventData = {}, id: string = randomUUID()): NewEvent {
  return {
    id,
    type,
    data,
    metadata: {
      actor: 'system',
      correlationId: 'c',
      causationId: null,
      occurredAt: '2026-01-01T00:00:00.000Z',
    },
  };
}

/** A stored event for the specs that read or process events: newEvent's, first in stream `s`, unless overridden. */
export function recordedEvent(type = 'Tested.v1', overrides: Partial<RecordedEvent> = {}): RecordedEvent {
  return {
    ...newEvent(type, {}, `event-of-${type}`),
    stream: 's',
    revision: 0,
    position: position(1),
    recordedAt: '2026-01-01T00:00:00.000Z',
    hash: 'a'.repeat(64),
    ...overrides,
  };
}
