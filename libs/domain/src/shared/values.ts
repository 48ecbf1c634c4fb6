import { FieldError } from './domain-error';
import { CONTROL_CHARACTERS, VISIBLE_CHARACTER } from './text';

export const NAME_MAX_LENGTH = 200;
export const AGE_MIN = 0;
export const AGE_MAX = 150;
export const EMAIL_MAX_LENGTH = 254;

/** Length in Unicode code points, so an emoji counts once. */
function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * A name is trimmed and 1 to 200 characters long, holds no control or bidirectional formatting
 * character, and something visible; returns the value to store or an error.
 */
export function checkName(field: string, value: unknown): string | FieldError {
  if (typeof value !== 'string') return { field, message: 'must be a string' };
  const trimmed = value.trim();
  const length = codePoints(trimmed);
  if (length < 1 || length > NAME_MAX_LENGTH) {
    return { field, message: `must be 1 to ${NAME_MAX_LENGTH} characters long after trimming` };
  }
  if (CONTROL_CHARACTERS.test(trimmed)) return { field, message: 'must not contain control characters' };
  if (!VISIBLE_CHARACTER.test(trimmed)) return { field, message: 'must contain a visible character' };
  return trimmed;
}

export function checkAge(field: string, value: unknown): number | FieldError {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < AGE_MIN || value > AGE_MAX) {
    return { field, message: `must be an integer from ${AGE_MIN} to ${AGE_MAX}` };
  }
  return value;
}

/** E-mail addresses compare case-insensitively after Unicode normalisation and trimming. */
export function normaliseEmail(email: string): string {
  return email.normalize('NFKC').trim().toLowerCase();
}

const EMAIL_SHAPE = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

export function checkEmail(field: string, value: unknown): string | FieldError {
  if (typeof value !== 'string') return { field, message: 'must be a string' };
  const email = value.normalize('NFKC').trim();
  if (email.length > EMAIL_MAX_LENGTH || !EMAIL_SHAPE.test(email)) {
    return { field, message: 'must be an e-mail address' };
  }
  return email;
}

export function isFieldError(value: unknown): value is FieldError {
  return typeof value === 'object' && value !== null && 'field' in value && 'message' in value;
}

/**
 * The stream that reserves an e-mail address (unique without a read model), named by a keyed hash
 * of the address (`addressHasher`): never by the address, nor a plain hash of it.
 */
export const emailStreamNameFor = (hash: string): string => `email-${hash}`;
