/** An RFC 3339 date-time: an offset is required. */
export const RFC_3339 = /^\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d{1,9})?([Zz]|[+-]\d\d:\d\d)$/;

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
