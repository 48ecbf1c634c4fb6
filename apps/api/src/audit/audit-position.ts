import { BadRequestException } from '@nestjs/common';
import { auditTime } from '@chronicle/application';
import { InvalidPositionError, parsePosition, Position } from '@chronicle/event-store';
import { invalidParameters } from '../http/validation';

// The DTO checks the shape of `after`; whether it names a position is the event store's rule
// (parsePosition), and whether a record starts there only the store itself can tell.

const MESSAGE = 'after must be a position such as 42 or 42:40';

/** `after` as a position, or a 400 naming it: a prepare after its commit, or 2^63 or more, is none. */
export function auditAfter(text: string): Position {
  const parsed = parsePosition(text);
  if (parsed === null) throw invalidAfter(MESSAGE);
  return parsed;
}

/** The store's refusal of `after` (a position inside a record) as the same 400; anything else as is. */
export function rethrowInvalidAfter(error: unknown): never {
  if (error instanceof InvalidPositionError) throw invalidAfter(error.message);
  throw error;
}

/**
 * `since` or `until` (RFC 3339 by the DTO's pattern) as the store keeps times, UTC with
 * milliseconds; a time the pattern lets through but no calendar has (month 13) is the same 400.
 */
export function auditTimeParameter(field: 'since' | 'until', text: string): string {
  const time = auditTime(text);
  if (time === null) throw invalidParameters([{ field, message: `${field} must be a valid RFC 3339 time` }]);
  return time;
}

/** The 400 the query's validation gives, naming `after`. */
const invalidAfter = (message: string): BadRequestException =>
  invalidParameters([{ field: 'after', message }]);
