import { decideErasure, ErasedError, ErasedSubject, isErasedSubject } from '../erasure/subject-erased';
import { Decider } from '../shared/decider';
import { AlreadyExistsError, NotFoundError } from '../shared/domain-error';
import { Initial } from '../shared/event';
import { UserEvent } from './user.events';
import { CLIENT_FIELD_NAMES, ClientFields, pickUserFields, UserRepresentation } from './user.fields';

export type User = { exists: true; accountId: string | null } & UserRepresentation;
/** An erased user keeps only what names no one: its account, whose erasure follows its own. */
export type ErasedUser = ErasedSubject & { accountId: string | null };
export type UserState = Initial | User | ErasedUser;
export const initialUserState: UserState = { exists: false };

/** Registers a user with fields already parsed (parseClientFields) at the edge. */
export interface RegisterUser {
  type: 'RegisterUser';
  userId: string;
  accountId: string | null;
  fields: ClientFields;
  now: string;
}

/** A merge patch (RFC 7396), already parsed into the values it sets (parseClientFields). */
export interface PatchUser {
  type: 'PatchUser';
  values: Partial<ClientFields>;
  now: string;
}

/** Erases the person (API.md "Personal data"): the account follows (CompleteErasure). */
export interface EraseUser {
  type: 'EraseUser';
  userId: string;
  now: string;
}

export type UserCommand = RegisterUser | PatchUser | EraseUser;

export function decideUser(command: UserCommand, state: UserState): UserEvent[] {
  switch (command.type) {
    case 'RegisterUser': {
      if (state.exists || isErasedSubject(state)) throw new AlreadyExistsError(`User ${command.userId}`);
      const fields = pickUserFields(command.fields, CLIENT_FIELD_NAMES) as ClientFields;
      return [
        {
          type: 'UserRegistered.v2',
          data: { userId: command.userId, accountId: command.accountId, ...fields, createdon: command.now },
        },
      ];
    }
    case 'PatchUser': {
      if (isErasedSubject(state)) throw new ErasedError('User', state.erasedAt);
      if (!state.exists) throw new NotFoundError('User');
      // Only what really changes: a patch that changes nothing emits nothing, and modifiedon stays.
      const changes: Partial<Record<keyof ClientFields, unknown>> = {};
      for (const field of CLIENT_FIELD_NAMES) {
        const value = command.values[field];
        if (value !== undefined && value !== state[field]) changes[field] = value;
      }
      if (Object.keys(changes).length === 0) return [];
      return [
        {
          type: 'UserPatched.v1',
          data: {
            userId: state.id,
            changes: changes as Partial<ClientFields>,
            modifiedon: strictlyAfter(command.now, state.modifiedon),
          },
        },
      ];
    }
    case 'EraseUser':
      return decideErasure(state, `user-${command.userId}`, 'user', command.now, 'User');
  }
}

/**
 * `now`, or 1 ms after `previous` when the clock has not moved past it (two changes within a
 * millisecond, or a writer whose clock is behind): each version of a user has a `modifiedon` of its
 * own, later than the one before, so that an as-of read by a `modifiedon` names one version.
 */
function strictlyAfter(now: string, previous: string): string {
  return now > previous ? now : new Date(Date.parse(previous) + 1).toISOString();
}

export function evolveUser(state: UserState, event: UserEvent): UserState {
  switch (event.type) {
    case 'UserRegistered.v2':
      return {
        exists: true,
        id: event.data.userId,
        accountId: event.data.accountId,
        ...(pickUserFields(event.data, CLIENT_FIELD_NAMES) as ClientFields),
        createdon: event.data.createdon,
        modifiedon: event.data.createdon,
      };
    case 'UserPatched.v1':
      if (!state.exists) return state;
      return {
        ...state,
        ...pickUserFields(event.data.changes, CLIENT_FIELD_NAMES),
        modifiedon: event.data.modifiedon,
      };
    case 'SubjectErased.v1':
      return {
        exists: false,
        erasedAt: event.data.erasedAt,
        accountId: state.exists ? state.accountId : null,
      };
  }
}

export const userDecider: Decider<UserState, UserCommand, UserEvent> = {
  initialState: initialUserState,
  decide: decideUser,
  evolve: evolveUser,
};
