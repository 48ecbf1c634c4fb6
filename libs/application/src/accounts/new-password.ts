import { passwordPolicyError } from '@chronicle/domain';
import { PasswordHasher } from '../shared/security.ports';

/** The hash of a new password (`new` in the request) that meets the policy, else the policy's error. */
export async function hashNewPassword(
  hasher: PasswordHasher,
  password: string,
  email: string,
): Promise<string> {
  const refusal = passwordPolicyError('new', password, email);
  if (refusal) throw refusal;
  return hasher.hash(password);
}
