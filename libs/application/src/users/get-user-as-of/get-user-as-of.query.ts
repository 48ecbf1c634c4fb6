import { Query } from '@nestjs/cqrs';
import { parsePosition, Position, POSITION_PATTERN } from '@chronicle/event-store';
import { UserDocument } from '@chronicle/read-models';
import { parseRfc3339, RFC_3339_SOURCE } from '../../shared/rfc-3339';

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
  const at = parseRfc3339(text);
  return at === null ? null : { at };
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
