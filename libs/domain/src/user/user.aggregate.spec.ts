import { AlreadyExistsError, NotFoundError } from '../shared/domain-error';
import { ErasedError } from '../erasure/subject-erased';
import { specFor } from '../shared/decider.spec-helper';
import { userDecider, UserState } from './user.aggregate';
import { ClientFields } from './user.fields';
import { UserEvent, UserRegistered } from './user.events';

const given = specFor(userDecider);
const T0 = '2026-11-22T09:15:00.000Z';
const T1 = '2026-11-22T10:00:00.000Z';
const registered: UserRegistered = {
  type: 'UserRegistered.v2',
  data: { userId: 'u-1', accountId: 'a-1', name: 'Ada', age: 36, createdon: T0 },
};
const patch = (values: Partial<ClientFields>) => ({ type: 'PatchUser' as const, values, now: T1 });

describe('User', () => {
  describe('RegisterUser', () => {
    const register = (fields: ClientFields) => ({
      type: 'RegisterUser' as const,
      userId: 'u-1',
      accountId: 'a-1',
      fields,
      now: T0,
    });

    it('registers a new user, created and last modified now', () => {
      given([])
        .when(register({ name: 'Ada', age: 36 }))
        .then([registered]);
      expect(given([registered]).state).toMatchObject({ createdon: T0, modifiedon: T0 });
    });

    it('takes only the client fields: nothing else reaches the event', () => {
      const smuggled = { name: 'Ada', age: 36, createdon: T1, admin: true } as ClientFields;
      given([]).when(register(smuggled)).then([registered]);
    });

    it('refuses a second registration, saying which user exists', () => {
      given([registered])
        .when(register({ name: 'Ada', age: 36 }))
        .thenFails(AlreadyExistsError, { message: 'User u-1 already exists' });
    });
  });

  describe('PatchUser', () => {
    it('emits only the fields whose value changes', () => {
      given([registered])
        .when(patch({ name: 'Ada', age: 37 }))
        .then([{ type: 'UserPatched.v1', data: { userId: 'u-1', changes: { age: 37 }, modifiedon: T1 } }]);
    });

    it('emits a change of name alone', () => {
      given([registered])
        .when(patch({ name: 'Ada L.' }))
        .then([
          { type: 'UserPatched.v1', data: { userId: 'u-1', changes: { name: 'Ada L.' }, modifiedon: T1 } },
        ]);
    });

    it('gives each change a modifiedon after the last, when the clock has not moved past it', () => {
      const first = {
        type: 'UserPatched.v1' as const,
        data: { userId: 'u-1', changes: { age: 37 }, modifiedon: T1 },
      };
      given([registered, first])
        .when(patch({ age: 38 }))
        .then([
          {
            type: 'UserPatched.v1',
            data: { userId: 'u-1', changes: { age: 38 }, modifiedon: '2026-11-22T10:00:00.001Z' },
          },
        ]);
      given([registered])
        .when({ type: 'PatchUser', values: { age: 40 }, now: '2026-11-22T09:00:00.000Z' })
        .then([
          {
            type: 'UserPatched.v1',
            data: { userId: 'u-1', changes: { age: 40 }, modifiedon: '2026-11-22T09:15:00.001Z' },
          },
        ]);
    });

    it('emits nothing for a patch that changes nothing', () => {
      given([registered])
        .when(patch({ name: 'Ada', age: 36 }))
        .then([]);
      given([registered]).when(patch({})).then([]);
    });

    it('folds patches: the latest values and modifiedon win, createdon stays', () => {
      const events: UserEvent[] = [
        registered,
        { type: 'UserPatched.v1', data: { userId: 'u-1', changes: { name: 'Grace' }, modifiedon: T1 } },
      ];
      expect(given(events).state).toEqual<UserState>({
        exists: true,
        id: 'u-1',
        accountId: 'a-1',
        name: 'Grace',
        age: 36,
        createdon: T0,
        modifiedon: T1,
      });
    });

    it('answers not found for a user with no events', () => {
      given([])
        .when(patch({ age: 3 }))
        .thenFails(NotFoundError, { message: 'User not found' });
    });
  });
});

describe('User erasure', () => {
  const T2 = '2026-11-22T11:00:00.000Z';
  const erase = { type: 'EraseUser' as const, userId: 'u-1', now: T2 };
  const erased: UserEvent = {
    type: 'SubjectErased.v1',
    data: { subject: 'user-u-1', kind: 'user', erasedAt: T2 },
  };
  // What the store hands back of an erased subject's events: personal values null.
  const registeredAsErased = {
    ...registered,
    data: { ...registered.data, name: null, age: null },
  } as unknown as UserRegistered;

  it('erases a user that exists, once', () => {
    given([registered]).when(erase).then([erased]);
    given([registeredAsErased, erased]).when(erase).then([]);
  });

  it('keeps only the account of an erased user, nothing personal', () => {
    expect(given([registeredAsErased, erased]).state).toEqual({
      exists: false,
      erasedAt: T2,
      accountId: 'a-1',
    });
  });

  it('answers erased, not not-found, to a patch of an erased user', () => {
    given([registeredAsErased, erased])
      .when(patch({ name: 'Back again' }))
      .thenFails(ErasedError, { code: 'erased', erasedAt: T2, message: 'User was erased' });
  });

  it('refuses to erase a user that never existed, and to register an erased one again', () => {
    given([]).when(erase).thenFails(NotFoundError, { code: 'not-found' });
    given([registeredAsErased, erased])
      .when({
        type: 'RegisterUser',
        userId: 'u-1',
        accountId: null,
        fields: { name: 'Ada', age: 36 },
        now: T2,
      })
      .thenFails(AlreadyExistsError, { code: 'already-exists' });
  });
});
