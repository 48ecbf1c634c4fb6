import { AlreadyExistsError, FieldError, NotFoundError, ValidationError } from '../shared/domain-error';
import { Initial } from '../shared/event';
import { checkAge, checkName, isFieldError } from '../shared/values';
import { UserEvent } from './user.events';

export interface User {
  exists: true;
  id: string;
  accountId: string | null;
  name: string;
  age: number;
  createdon: string;
  modifiedon: string;
}
export type UserState = Initial | User;
export const initialUserState: UserState = { exists: false };

export interface RegisterUser {
  type: 'RegisterUser';
  userId: string;
  accountId: string | null;
  name: unknown;
  age: unknown;
  now: string;
}

/** A merge patch (RFC 7396) body, already known to be a JSON object. */
export interface PatchUser {
  type: 'PatchUser';
  patch: Record<string, unknown>;
  now: string;
}

export type UserCommand = RegisterUser | PatchUser;

const PATCHABLE = new Set(['name', 'age']);

/** The changed values of a valid patch, or the field errors of an invalid one. */
export function validateUserPatch(patch: Record<string, unknown>): { name?: string; age?: number } {
  const errors: FieldError[] = [];
  const values: { name?: string; age?: number } = {};
  for (const field of Object.keys(patch)) {
    if (!PATCHABLE.has(field)) errors.push({ field, message: 'is not a field that can be changed' });
  }
  if ('name' in patch) {
    const name =
      patch.name === null
        ? { field: 'name', message: 'is required and cannot be removed' }
        : checkName('name', patch.name);
    if (isFieldError(name)) errors.push(name);
    else values.name = name;
  }
  if ('age' in patch) {
    const age =
      patch.age === null
        ? { field: 'age', message: 'is required and cannot be removed' }
        : checkAge('age', patch.age);
    if (isFieldError(age)) errors.push(age);
    else values.age = age;
  }
  if (errors.length > 0) throw new ValidationError(errors);
  return values;
}

export function decideUser(command: UserCommand, state: UserState): UserEvent[] {
  switch (command.type) {
    case 'RegisterUser': {
      if (state.exists) throw new AlreadyExistsError(`User ${command.userId}`);
      const name = checkName('name', command.name);
      const age = checkAge('age', command.age);
      const errors = [name, age].filter(isFieldError);
      if (errors.length > 0) throw new ValidationError(errors);
      return [
        {
          type: 'UserRegistered.v2',
          data: {
            userId: command.userId,
            accountId: command.accountId,
            name: name as string,
            age: age as number,
            createdon: command.now,
          },
        },
      ];
    }
    case 'PatchUser': {
      const values = validateUserPatch(command.patch);
      if (!state.exists) throw new NotFoundError('User');
      const changes: { name?: string; age?: number } = {};
      if (values.name !== undefined && values.name !== state.name) changes.name = values.name;
      if (values.age !== undefined && values.age !== state.age) changes.age = values.age;
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'UserPatched.v1', data: { userId: state.id, changes, modifiedon: command.now } }];
    }
  }
}

export function evolveUser(state: UserState, event: UserEvent): UserState {
  switch (event.type) {
    case 'UserRegistered.v2':
      return {
        exists: true,
        id: event.data.userId,
        accountId: event.data.accountId,
        name: event.data.name,
        age: event.data.age,
        createdon: event.data.createdon,
        modifiedon: event.data.createdon,
      };
    case 'UserPatched.v1':
      if (!state.exists) return state;
      return { ...state, ...event.data.changes, modifiedon: event.data.modifiedon };
  }
}

export const userDecider = { initialState: initialUserState, decide: decideUser, evolve: evolveUser };
