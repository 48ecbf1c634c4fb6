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
        .thenThrows(NotFoundError);
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
