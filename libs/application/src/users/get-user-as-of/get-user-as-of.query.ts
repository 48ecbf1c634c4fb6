import { Query } from '@nestjs/cqrs';
import { parsePosition, Position, POSITION_PATTERN } from '@chronicle/event-store';
import { UserDocument } from '@chronicle/read-models';
import { RFC_3339_SOURCE } from '../../audit/list-audit-events/list-audit-events.query';

/** A moment in the history: a time, or a position in the global log (inclusive). */
export type AsOf = { at: Date } | { position: Position };

/** RFC 3339 date-time (an offset is required), or a position such as 42 or 42:40. */
export const AS_OF_PATTERN = new RegExp(`^(?:${RFC_3339_SOURCE}|${POSITION_PATTERN})$`);

/** `asOf` as sent (API and CLI alike): a time or a position, or null when it is neither. */
export function parseAsOf(text: string): AsOf | null {
  if (!AS_OF_PATTERN.test(text)) return null;
  if (/^\d/.test(text) && !text.includes('-')) {
    const position = parsePosition(text);
    return position === null ? null : { position };
  }
  const at = new Date(text);
  // Date accepts 2026-02-30 as March 2nd: the day must survive the round trip (UTC or not).
  const [, year, month, day] = /^(\d{4})-(\d\d)-(\d\d)/.exec(text)!;
  // setUTCFullYear, not Date.UTC, which takes years 0 to 99 for 1900 to 1999.
  const local = new Date(0);
  local.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  const valid =
    !Number.isNaN(at.getTime()) &&
    local.getUTCFullYear() === Number(year) &&
    local.getUTCMonth() === Number(month) - 1 &&
    local.getUTCDate() === Number(day);
  return valid ? { at } : null;
}

/**
 * A user as it was at a moment (as it is at the head without one), folded from its stream alone:
 * for hosts without read models (the CLI). Callers check who may ask; GET /users/{id} does.
 */
export class GetUserAsOfQuery extends Query<UserDocument> {
  constructor(
    readonly userId: string,
    readonly asOf?: AsOf,
  ) {
    super();
  }
}
