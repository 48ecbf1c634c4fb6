import { emailStreamNameFor } from '../shared/values';
import { EventUpcaster } from '../shared/upcaster';

/**
 * PasswordResetRequested.v1 → v2: a v1 request named its address by the plain SHA-256 that also
 * named the address's reservation stream then, so it reads as a request whose reservation is that
 * stream (`email-<emailHash>`). Those streams are kept (the history is never rewritten), so a
 * request made before the upgrade still finds the account that had its address.
 */
export const passwordResetRequestedV1ToV2: EventUpcaster = {
  from: 'PasswordResetRequested.v1',
  to: 'PasswordResetRequested.v2',
  upcast({ emailHash, ...rest }) {
    return { ...rest, reservation: emailStreamNameFor(String(emailHash)) };
  },
};
