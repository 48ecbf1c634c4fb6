import { SubjectErased } from '../erasure/subject-erased';
import { DomainEvent } from '../shared/event';
import { ClientFields } from './user.fields';

/** As first written: `createdon` is any ISO 8601 text (second precision, offsets). Read as v2. */
export type UserRegisteredV1 = DomainEvent<
  'UserRegistered.v1',
  { userId: string; accountId: string | null; name: string; age: number; createdon: string }
>;

/** `createdon` is RFC 3339 UTC with milliseconds, exactly as toISOString() writes it. */
export type UserRegistered = DomainEvent<
  'UserRegistered.v2',
  { userId: string; accountId: string | null } & ClientFields & { createdon: string }
>;

/** `changes` holds only the fields whose value really changed. */
export type UserPatched = DomainEvent<
  'UserPatched.v1',
  { userId: string; changes: Partial<ClientFields>; modifiedon: string }
>;

export type UserEvent = UserRegistered | UserPatched | SubjectErased;

export const userStreamName = (userId: string): string => `user-${userId}`;
