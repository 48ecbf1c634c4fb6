import { DomainEvent } from '../shared/event';

export type UserRegistered = DomainEvent<
  'UserRegistered.v1',
  { userId: string; accountId: string | null; name: string; age: number; createdon: string }
>;

/** `changes` holds only the fields whose value really changed. */
export type UserPatched = DomainEvent<
  'UserPatched.v1',
  { userId: string; changes: { name?: string; age?: number }; modifiedon: string }
>;

export type UserEvent = UserRegistered | UserPatched;

export const userStreamName = (userId: string): string => `user-${userId}`;
