import { ExpectedRevision, NewEvent } from './event-store.port';

/** What every adapter refuses before touching its store, so all adapters refuse the same appends. */
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
