import type { dictionary as Dictionary } from '@zxcvbn-ts/language-common';
import { FieldError } from '../shared/domain-error';
import { normaliseEmail } from '../shared/values';

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 256;

let commonPasswords: ReadonlySet<string> | null = null;

/** zxcvbn-ts's list of ~49,000 passwords seen most often in breaches, loaded on first use. */
function isCommonPassword(password: string): boolean {
  commonPasswords ??= loadCommonPasswords();
  return commonPasswords.has(password.toLowerCase());
}

function loadCommonPasswords(): ReadonlySet<string> {
  // Required here, not imported: the package decompresses every dictionary as it loads (7 MiB and
  // 25 ms), which the processes that never check a password (the sagas' worker, the CLI's
  // reads) should not pay.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { dictionary } = require('@zxcvbn-ts/language-common') as { dictionary: typeof Dictionary };
  return new Set(dictionary['passwords-common'].map((entry) => entry.toLowerCase()));
}

/**
 * RFC 8265's OpaqueString profile, as every password is hashed and checked: non-ASCII spaces
 * become U+0020, then NFC. A password typed on any system (NFC on most, NFD on some) is then one
 * password, as `WWW-Authenticate: Basic charset="UTF-8"` promises (RFC 7617).
 */
export function preparePassword(password: string): string {
  return password.replace(/\p{Zs}/gu, ' ').normalize('NFC');
}

/** RFC 8265's FreeformClass refuses control characters. */
const CONTROL = /\p{Cc}/u;

/**
 * NIST SP 800-63B: length is what counts, no composition rules; the address itself is refused.
 * Length is counted in code points so that any Unicode character counts once.
 */
export function checkPassword(field: string, raw: unknown, email: string): FieldError | null {
  if (typeof raw !== 'string') return { field, message: 'must be a string' };
  // Judged as it is hashed.
  const password = preparePassword(raw);
  if (CONTROL.test(password)) return { field, message: 'must not contain control characters' };
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) {
    return { field, message: `must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters long` };
  }
  if (normaliseEmail(password) === normaliseEmail(email)) {
    return { field, message: 'must not be the account e-mail address' };
  }
  if (isCommonPassword(password)) {
    return { field, message: 'is one of the most common passwords; choose a less guessable one' };
  }
  return null;
}
