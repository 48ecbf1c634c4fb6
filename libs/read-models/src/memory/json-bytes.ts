// Customer text and numbers written straight into the JSON bytes a page is sent as.

/** A text field as the contents of its JSON string literal (usually the text itself). */
export function escapeJson(text: string | undefined): string | undefined {
  return text === undefined || !needsEscaping(text) ? text : JSON.stringify(text).slice(1, -1);
}

/** Whether JSON.stringify would change the text: a quote, a backslash, a control or surrogate code unit. */
function needsEscaping(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return true;
  }
  return false;
}

export function put(out: Buffer, at: number, bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) out[at++] = bytes[i];
  return at;
}

/**
 * Writes an integer's decimal digits, as JSON.stringify would. The arithmetic below stays in
 * int32 (`| 0`): on doubles, V8 computes `%` by a call to fmod, several times slower.
 */
export function putInteger(out: Buffer, at: number, value: number): number {
  if (!(value >= 0 && value <= 0x7fffffff && value === (value | 0))) {
    return at + out.write(JSON.stringify(value), at, 'latin1');
  }
  let digits = 1;
  for (let rest = value; rest >= 10; rest = (rest / 10) | 0) digits++;
  return putDigits(out, at, value, digits);
}

/**
 * Writes epoch ms (years 1000 to 9999, as canonicalTimestamp admits) as toISOString() does:
 * days to civil date by Howard Hinnant's algorithm, in int32 arithmetic, with no Date or string made.
 */
export function putTimestamp(out: Buffer, at: number, ms: number): number {
  const days = Math.floor(ms / 86_400_000);
  const msOfDay = (ms - days * 86_400_000) | 0;
  const shifted = (days + 719_468) | 0;
  const era = Math.floor(shifted / 146_097) | 0;
  const dayOfEra = (shifted - era * 146_097) | 0;
  const yearOfEra =
    ((dayOfEra - ((dayOfEra / 1460) | 0) + ((dayOfEra / 36_524) | 0) - ((dayOfEra / 146_096) | 0)) / 365) | 0;
  const dayOfYear = (dayOfEra - (365 * yearOfEra + ((yearOfEra / 4) | 0) - ((yearOfEra / 100) | 0))) | 0;
  const monthIndex = ((5 * dayOfYear + 2) / 153) | 0;
  const day = (dayOfYear - (((153 * monthIndex + 2) / 5) | 0) + 1) | 0;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  const year = (yearOfEra + era * 400 + (month <= 2 ? 1 : 0)) | 0;
  const hour = (msOfDay / 3_600_000) | 0;
  const minute = ((msOfDay / 60_000) | 0) % 60;
  const second = ((msOfDay / 1000) | 0) % 60;
  at = putDigits(out, at, year, 4);
  out[at++] = 0x2d; // -
  at = putDigits(out, at, month, 2);
  out[at++] = 0x2d;
  at = putDigits(out, at, day, 2);
  out[at++] = 0x54; // T
  at = putDigits(out, at, hour, 2);
  out[at++] = 0x3a; // :
  at = putDigits(out, at, minute, 2);
  out[at++] = 0x3a;
  at = putDigits(out, at, second, 2);
  out[at++] = 0x2e; // .
  at = putDigits(out, at, msOfDay % 1000, 3);
  out[at++] = 0x5a; // Z
  return at;
}

/** Writes a non-negative int32 as exactly `width` digits, zero-padded. */
function putDigits(out: Buffer, at: number, value: number, width: number): number {
  for (let i = at + width - 1; i >= at; i--) {
    const rest = (value / 10) | 0;
    out[i] = 48 + value - rest * 10;
    value = rest;
  }
  return at + width;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const CANONICAL_SHAPE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * Epoch ms of an RFC 3339 UTC timestamp in exactly the form toISOString() writes back
 * (`2026-11-22T09:15:00.000Z`, years 1000 to 9999), else null. Parsed by hand: Date.parse plus
 * a toISOString() round trip costs more than the rest of applying a customer.
 */
export function canonicalTimestamp(text: string): number | null {
  if (!CANONICAL_SHAPE.test(text)) return null;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  const hour = digits(text, 11, 13);
  const minute = digits(text, 14, 16);
  const second = digits(text, 17, 19);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const monthDays = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > monthDays) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  return Date.UTC(year, month - 1, day, hour, minute, second, digits(text, 20, 23));
}

function digits(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) value = value * 10 + text.charCodeAt(i) - 48;
  return value;
}
