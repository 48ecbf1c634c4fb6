import type { NewEvent } from '../event-store.port';
import { newEvent } from '../new-event.spec-helper';

/** A user's events as a build from before personal values were encrypted wrote them: plaintext, no marker. */
export const plaintextRegistered = (userId: string, name: string): NewEvent =>
  newEvent('UserRegistered.v1', {
    userId,
    accountId: null,
    name,
    age: 36,
    createdon: '2020-01-01T00:00:00.000Z',
  });

export const plaintextPatched = (userId: string, name: string): NewEvent =>
  newEvent('UserPatched.v1', { userId, changes: { name }, modifiedon: '2020-01-02T00:00:00.000Z' });
