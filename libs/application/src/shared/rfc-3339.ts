/**
 * An RFC 3339 date-time with an offset, as `since`, `until` and `asOf` take it, each field in its
 * range (no leap second: Date has none); which days a month has is JSON schema's `date-time`, and
 * parseRfc3339's.
 */
export const RFC_3339_SOURCE =
  '\\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\\d|3[01])[Tt](?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d{1,9})?' +
  '(?:[Zz]|[+-](?:[01]\\d|2[0-3]):[0-5]\\d)';
export const RFC_3339 = new RegExp(`^${RFC_3339_SOURCE}$`);

/**
 * The instant an RFC 3339 time names, or null when it is none: not of the form, or a date or time
 * no calendar has (month 13, 25:00, and February 30th, which Date would take as March 2nd).
 */
export function parseRfc3339(text: string): Date | null {
  if (!RFC_3339.test(text)) return null;
  const at = new Date(text);
  if (Number.isNaN(at.getTime())) return null;
  // The date as written, not as shifted by its offset, must be a day of the calendar.
  const [year, month, day] = text.slice(0, 10).split('-').map(Number);
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
    ? at
    : null;
}
