import { LogQuery, ReadAllOptions } from './event-store.port';

// What every adapter refuses of a read before touching its store, so all adapters refuse the same
// reads (as validateAppend does for appends).

/** The revision a stream read starts at: 0 when absent. */
export function validFromRevision(fromRevision: number | undefined): number {
  const from = fromRevision ?? 0;
  if (!Number.isSafeInteger(from) || from < 0) {
    throw new RangeError(`fromRevision must be a non-negative integer, got ${from}`);
  }
  return from;
}

export function validateReadAll({ limit, eventTypes, exceptTypes }: ReadAllOptions): void {
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0)) {
    throw new RangeError(`limit must be a non-negative integer, got ${limit}`);
  }
  if (eventTypes !== undefined && exceptTypes !== undefined) {
    throw new RangeError('eventTypes and exceptTypes exclude each other');
  }
}

export function validateLogQuery({ limit }: LogQuery): void {
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new RangeError(`limit must be a positive integer, got ${limit}`);
  }
}
