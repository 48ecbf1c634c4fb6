import { ValidationError } from '../shared/domain-error';
import {
  CLIENT_FIELD_NAMES,
  parseClientFields,
  pickUserFields,
  USER_FIELD_NAMES,
  userRepresentation,
} from './user.fields';

const T1 = '2026-11-22T10:00:00.000Z';

function fieldErrors(input: Record<string, unknown>, mode: 'all' | 'patch') {
  try {
    parseClientFields(input, mode as 'patch');
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).errors;
  }
  throw new Error('expected a ValidationError');
}

describe('user fields', () => {
  it('declares the fields in representation order, the client ones first', () => {
    expect(USER_FIELD_NAMES).toEqual(['name', 'age', 'createdon', 'modifiedon']);
    expect(CLIENT_FIELD_NAMES).toEqual(['name', 'age']);
  });

  describe('parseClientFields', () => {
    it('parses every client field at registration, trimming the name', () => {
      expect(parseClientFields({ name: '  Ada  ', age: 36 }, 'all')).toEqual({ name: 'Ada', age: 36 });
    });

    it('counts characters, not UTF-16 units: 200 emoji are a valid name', () => {
      expect(parseClientFields({ name: '😀'.repeat(200), age: 1 }, 'all').name).toBe('😀'.repeat(200));
    });

    it.each([
      ['', 36],
      ['x'.repeat(201), 36],
      ['Ada', -1],
      ['Ada', 151],
      ['Ada', 3.5],
      [42, 36],
    ])('refuses name %p with age %p', (name, age) => {
      expect(() => parseClientFields({ name, age }, 'all')).toThrow(ValidationError);
    });

    it('names each invalid field of a registration, and each missing one', () => {
      expect(fieldErrors({ name: '', age: 151 }, 'all')).toEqual([
        { field: 'name', message: 'must be 1 to 200 characters long after trimming' },
        { field: 'age', message: 'must be an integer from 0 to 150' },
      ]);
      expect(fieldErrors({ name: 'Ada' }, 'all')).toEqual([{ field: 'age', message: 'is required' }]);
    });

    it('takes any subset in a patch, and nothing for an empty one', () => {
      expect(parseClientFields({ age: 37 }, 'patch')).toEqual({ age: 37 });
      expect(parseClientFields({}, 'patch')).toEqual({});
    });

    it.each([
      [{ name: null }, 'name'],
      [{ age: null }, 'age'],
      [{ id: 'u-2' }, 'id'],
      [{ createdon: T1 }, 'createdon'],
      [{ modifiedon: T1 }, 'modifiedon'],
      [JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>, '__proto__'],
    ])('refuses %p naming the field', (body, field) => {
      expect(fieldErrors(body, 'patch').map((e) => e.field)).toContain(field);
    });

    it('says why: a required field cannot be removed, others cannot be changed', () => {
      expect(fieldErrors({ name: null, age: null, id: 'u-2' }, 'patch')).toEqual([
        { field: 'id', message: 'is not a field that can be changed' },
        { field: 'name', message: 'is required and cannot be removed' },
        { field: 'age', message: 'is required and cannot be removed' },
      ]);
    });

    it('reports every invalid field at once', () => {
      expect(
        fieldErrors({ name: '', age: 200, extra: true }, 'patch')
          .map((e) => e.field)
          .sort(),
      ).toEqual(['age', 'extra', 'name']);
    });
  });

  it('picks only declared fields that hold a value, in declaration order', () => {
    const source = { modifiedon: T1, age: 3, extra: 'x', name: undefined } as Record<string, unknown>;
    const picked = pickUserFields(source);
    expect(picked).toEqual({ age: 3, modifiedon: T1 });
    expect(Object.keys(picked)).toEqual(['age', 'modifiedon']);
    expect(pickUserFields(source, CLIENT_FIELD_NAMES)).toEqual({ age: 3 });
  });

  it('represents a user as its id and declared fields, dropping anything else', () => {
    const user = {
      exists: true,
      accountId: 'a-1',
      id: 'u-1',
      name: 'Ada',
      age: 3,
      createdon: T1,
      modifiedon: T1,
    };
    const shown = userRepresentation(user);
    expect(Object.keys(shown)).toEqual(['id', 'name', 'age', 'createdon', 'modifiedon']);
  });
});
