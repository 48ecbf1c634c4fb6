import { FieldError } from '../shared/domain-error';
import { normaliseEmail } from '../shared/values';

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 256;

/**
 * NIST SP 800-63B: length is what counts, no composition rules; the address itself is refused.
 * Length is counted in code points so that any Unicode character counts once.
 */
export function checkPassword(field: string, password: unknown, email: string): FieldError | null {
  if (typeof password !== 'string') return { field, message: 'must be a string' };
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) {
    return { field, message: `must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters long` };
  }
  if (normaliseEmail(password) === normaliseEmail(email)) {
    return { field, message: 'must not be the account e-mail address' };
  }
  return null;
}
