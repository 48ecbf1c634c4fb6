import { randomUUID } from 'node:crypto';
import type { EventData, NewEvent } from './event-store.port';

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
