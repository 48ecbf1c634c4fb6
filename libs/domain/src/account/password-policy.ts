import type { dictionary as Dictionary } from '@zxcvbn-ts/language-common';
import { FieldError, ValidationError } from '../shared/domain-error';
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

/**
 * What a password may hold: RFC 8265's FreeformClass refuses control characters (Unicode's Cc,
 * exactly U+0000-U+001F and U+007F-U+009F). Written as ranges so the API's document states it.
 */
// eslint-disable-next-line no-control-regex
export const PASSWORD_CHARACTERS = /^[^\u0000-\u001f\u007f-\u009f]*$/;

/**
 * The rules of the policy that no JSON schema can state, each a problem type of its own; the
 * length and the control characters are the schema's to state (minLength and maxLength count code
 * points too).
 */
export type PasswordRule = 'password-length' | 'password-control' | 'password-is-email' | 'common-password';

const RULE_MESSAGES: Record<PasswordRule, string> = {
  'password-length': `must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters long`,
  'password-control': 'must not contain control characters',
  'password-is-email': 'must not be the account e-mail address',
  'common-password': 'is one of the most common passwords; choose a less guessable one',
};

/**
 * NIST SP 800-63B: length is what counts, no composition rules; the address itself is refused.
 * Length is counted in code points so that any Unicode character counts once.
 */
function brokenRule(raw: string, email: string): PasswordRule | null {
  // Judged as it is hashed.
  const password = preparePassword(raw);
  if (!PASSWORD_CHARACTERS.test(password)) return 'password-control';
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) return 'password-length';
  if (normaliseEmail(password) === normaliseEmail(email)) return 'password-is-email';
  if (isCommonPassword(password)) return 'common-password';
  return null;
}

/** The policy's refusal as a field error, or null. */
export function checkPassword(field: string, password: unknown, email: string): FieldError | null {
  if (typeof password !== 'string') return { field, message: 'must be a string' };
  const rule = brokenRule(password, email);
  return rule === null ? null : { field, message: RULE_MESSAGES[rule] };
}

/** The error a request gets for breaking `rule`: its problem type names the rule (a length is a value rule like any other). */
export function passwordRefusal(field: string, rule: PasswordRule): ValidationError {
  return new ValidationError(
    [{ field, message: RULE_MESSAGES[rule] }],
    rule === 'password-length' || rule === 'password-control' ? undefined : rule,
  );
}

/** The policy's refusal of a new password, or null when it meets the policy. */
export function passwordPolicyError(field: string, password: string, email: string): ValidationError | null {
  const rule = brokenRule(password, email);
  return rule === null ? null : passwordRefusal(field, rule);
}
