import { AlreadyExistsError, NotFoundError, ValidationError } from '../shared/domain-error';
import { specFor } from '../shared/decider.spec-helper';
import { userDecider, UserState, validateUserPatch } from './user.aggregate';
import { UserEvent, UserRegistered } from './user.events';

const given = specFor(userDecider);
const T0 = '2026-11-22T09:15:00.000Z';
const T1 = '2026-11-22T10:00:00.000Z';
const registered: UserRegistered = {
  type: 'UserRegistered.v2',
  data: { userId: 'u-1', accountId: 'a-1', name: 'Ada', age: 36, createdon: T0 },
};
const patch = (body: Record<string, unknown>) => ({ type: 'PatchUser' as const, patch: body, now: T1 });

describe('User', () => {
  describe('RegisterUser', () => {
    const register = (name: unknown, age: unknown) => ({
      type: 'RegisterUser' as const,
      userId: 'u-1',
      accountId: 'a-1',
      name,
      age,
      now: T0,
    });

    it('registers a new user with a trimmed name', () => {
      given([]).when(register('  Ada  ', 36)).then([registered]);
    });

    it('refuses a second registration', () => {
      given([registered]).when(register('Ada', 36)).thenThrows(AlreadyExistsError);
    });

    it.each([
      ['', 36],
      ['x'.repeat(201), 36],
      ['Ada', -1],
      ['Ada', 151],
      ['Ada', 3.5],
      [42, 36],
    ])('refuses name %p with age %p', (name, age) => {
      given([]).when(register(name, age)).thenThrows(ValidationError);
    });

    it('names each invalid field, and says which user exists', () => {
      given([])
        .when(register('', 151))
        .thenFails(ValidationError, {
          errors: [
            { field: 'name', message: 'must be 1 to 200 characters long after trimming' },
            { field: 'age', message: 'must be an integer from 0 to 150' },
          ],
        });
      given([registered])
        .when(register('Ada', 36))
        .thenFails(AlreadyExistsError, { message: 'User u-1 already exists' });
    });

    it('counts characters, not UTF-16 units: 200 emoji are a valid name', () => {
      given([])
        .when(register('😀'.repeat(200), 1))
        .then([{ ...registered, data: { ...registered.data, name: '😀'.repeat(200), age: 1 } }]);
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

    it('emits nothing for a patch that changes nothing', () => {
      given([registered])
        .when(patch({ name: ' Ada ', age: 36 }))
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

    it('validates before looking for the user', () => {
      given([])
        .when(patch({ age: 'old' }))
        .thenThrows(ValidationError);
    });

    it.each([
      [{ name: null }, 'name'],
      [{ age: null }, 'age'],
      [{ id: 'u-2' }, 'id'],
      [{ createdon: T1 }, 'createdon'],
      [{ modifiedon: T1 }, 'modifiedon'],
      [JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>, '__proto__'],
    ])('refuses %p naming the field', (body, field) => {
      expect(() => validateUserPatch(body)).toThrow(ValidationError);
      try {
        validateUserPatch(body);
      } catch (error) {
        expect((error as ValidationError).errors.map((e) => e.field)).toContain(field);
      }
    });

    it('says why: a required field cannot be removed, others cannot be changed', () => {
      given([registered])
        .when(patch({ name: null, age: null, id: 'u-2' }))
        .thenFails(ValidationError, {
          errors: [
            { field: 'id', message: 'is not a field that can be changed' },
            { field: 'name', message: 'is required and cannot be removed' },
            { field: 'age', message: 'is required and cannot be removed' },
          ],
        });
    });

    it('reports every invalid field at once', () => {
      try {
        validateUserPatch({ name: '', age: 200, extra: true });
        throw new Error('expected a ValidationError');
      } catch (error) {
        expect((error as ValidationError).errors.map((e) => e.field).sort()).toEqual([
          'age',
          'extra',
          'name',
        ]);
      }
    });
  });
});
