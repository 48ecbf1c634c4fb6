import { BadRequestException } from '@nestjs/common';
import { auditTime } from '@chronicle/application';
import { InvalidPositionError, parsePosition, Position } from '@chronicle/event-store';
import { invalidParameters } from '../http/validation';
import { refusal } from '../http/openapi';

// The DTO checks the shape of `after`; whether it names a position is the event store's rule
// (parsePosition), and whether a record starts there only the store itself can tell.

const MESSAGE = 'after must be a position such as 42 or 42:40';

/** `after` as a position, or a 400 naming it: a prepare after its commit names none. */
export function auditAfter(text: string): Position {
  const parsed = parsePosition(text);
  if (parsed === null) throw invalidPosition('after', MESSAGE);
  return parsed;
}

/** The store's refusal of `after` (a position inside a record) as the same 400; anything else as is. */
export function rethrowInvalidAfter(error: unknown): never {
  if (error instanceof InvalidPositionError) throw invalidPosition('after', error.message);
  throw error;
}

/**
 * The 400 of a position of the right shape that names no record: its prepare after its commit, or
 * (on EventStoreDB) inside a record. No pattern can state either, so it has a problem type of its own.
 */
export function invalidPosition(field: string, message: string): BadRequestException {
  return new BadRequestException({
    type: 'invalid-position',
    title: 'Invalid position',
    detail: 'The position names no record of the history.',
    errors: [{ field, message }],
  });
}

/** The document's word on it. */
export const INVALID_POSITION = refusal(
  invalidPosition('after', 'commit before prepare'),
  'a position whose prepare comes after its commit, or (EventStoreDB) that falls inside a record.',
);

/**
 * `since` or `until` (RFC 3339 by the DTO's pattern) as the store keeps times, UTC with
 * milliseconds; a time the pattern lets through but no calendar has (month 13) is the same 400.
 */
export function auditTimeParameter(field: 'since' | 'until', text: string): string {
  const time = auditTime(text);
  if (time === null) throw invalidParameters([{ field, message: `${field} must be a valid RFC 3339 time` }]);
  return time;
}
