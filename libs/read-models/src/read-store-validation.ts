import { CUSTOMER_FIELDS, fieldJsTypes, USER_FIELDS } from '@chronicle/domain';
import { Position } from '@chronicle/event-store';

import { CustomerListQuery, DocumentChange } from './read-store.port';

// What every ReadStore adapter refuses, so all of them refuse the same input (the contract suite
// holds them to it) and a bad batch is refused before anything is written.

const MAX_POSITION = 2n ** 64n - 1n;

/** The members a change may set, with their `typeof`: the id, the declared fields, and the users' revision. */
const FIELD_TYPES = {
  customers: new Map([['id', 'number'], ...fieldJsTypes(CUSTOMER_FIELDS)]),
  users: new Map([['id', 'string'], ...fieldJsTypes(USER_FIELDS), ['revision', 'number']]),
};

export function validatePosition(position: Position, what: string): void {
  for (const part of [position.commit, position.prepare]) {
    if (typeof part !== 'bigint' || part < 0n || part > MAX_POSITION) {
      throw new RangeError(`${what} must be two unsigned 64-bit integers`);
    }
  }
}

export function validateChanges(changes: DocumentChange[]): void {
  for (const change of changes) {
    validatePosition(change.position, 'change position');
    if (change.collection === 'customers') {
      if (!Number.isSafeInteger(change.id))
        throw new RangeError(`Customer id ${change.id} is not an integer`);
    } else if (change.collection === 'users') {
      if (typeof change.id !== 'string') throw new TypeError('User id must be a string');
    } else {
      throw new TypeError(`Unknown collection ${String((change as { collection: unknown }).collection)}`);
    }
    if (change.remove) continue;
    const types = FIELD_TYPES[change.collection];
    const set: Record<string, unknown> = change.set;
    for (const field in set) {
      const type = types.get(field);
      if (type === undefined) throw new RangeError(`Unknown field ${field}`);
      const value = set[field];
      if (value !== undefined && typeof value !== type)
        throw new TypeError(`Field ${field} must be a ${type}`);
    }
    if (set.id !== undefined && set.id !== change.id) {
      throw new RangeError(
        `A change to document ${String(change.id)} cannot set id ${JSON.stringify(set.id)}`,
      );
    }
  }
}

export function validateListQuery(query: CustomerListQuery): void {
  if (!Number.isSafeInteger(query.offset) || query.offset < 0) {
    throw new RangeError('offset must be a non-negative integer');
  }
  if (!Number.isSafeInteger(query.limit) || query.limit < 0) {
    throw new RangeError('limit must be a non-negative integer');
  }
  if (Number.isNaN(query.gt) || Number.isNaN(query.lt)) throw new RangeError('gt and lt must be numbers');
}
