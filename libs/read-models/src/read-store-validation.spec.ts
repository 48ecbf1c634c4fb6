import { Position } from '@chronicle/event-store';
import { DocumentChange } from './read-store.port';
import { validateChanges, validateListQuery, validatePosition } from './read-store-validation';

const at = (commit: bigint, prepare = commit): Position => ({ commit, prepare });
const MAX = 2n ** 64n - 1n;

/** Throws an error of exactly this class and message. */
function refuses(act: () => void, type: ErrorConstructor, message: string): void {
  let thrown: unknown;
  try {
    act();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(type);
  expect((thrown as Error).constructor).toBe(type);
  expect((thrown as Error).message).toBe(message);
}

const customer = (set: Record<string, unknown>, id: unknown = 1, position = at(1n)) =>
  ({ collection: 'customers', id, position, set }) as DocumentChange;
const user = (set: Record<string, unknown>, id: unknown = 'u-1', position = at(1n)) =>
  ({ collection: 'users', id, position, set }) as DocumentChange;

describe('validatePosition', () => {
  it.each([
    ['zero', at(0n)],
    ['the largest unsigned 64-bit integers', at(MAX)],
    ['a prepare below its commit', at(MAX, 0n)],
  ])('accepts %s', (_, position) => {
    expect(() => validatePosition(position, 'p')).not.toThrow();
  });

  it.each([
    ['a negative commit', at(-1n, 0n)],
    ['a negative prepare', at(0n, -1n)],
    ['a commit past 64 bits', at(MAX + 1n, 0n)],
    ['a prepare past 64 bits', at(0n, MAX + 1n)],
    ['a commit that is a number', { commit: 1, prepare: 1n } as unknown as Position],
    ['a prepare that is a number', { commit: 1n, prepare: 1 } as unknown as Position],
  ])('refuses %s, naming what it checked', (_, position) => {
    refuses(
      () => validatePosition(position, 'the checkpoint'),
      RangeError,
      'the checkpoint must be two unsigned 64-bit integers',
    );
  });
});

describe('validateChanges', () => {
  it('accepts every field of each collection with its own type, and unset fields', () => {
    expect(() =>
      validateChanges([
        customer({ id: 1, name: 'N', email: 'e@x', createdon: '2026-01-01T00:00:00.000Z' }),
        customer({ name: undefined }, 2),
        user({
          id: 'u-1',
          name: 'Ada',
          age: 36,
          createdon: '2026-01-01T00:00:00.000Z',
          modifiedon: '2026-01-01T00:00:00.000Z',
          revision: 4,
        }),
        user({ age: undefined }),
        customer({}, -3),
      ]),
    ).not.toThrow();
  });

  it('checks the position of every change', () => {
    refuses(
      () => validateChanges([customer({}), customer({}, 2, at(-1n))]),
      RangeError,
      'change position must be two unsigned 64-bit integers',
    );
  });

  it.each([1.5, Number.NaN, 2 ** 53, '1'])('refuses customer id %p', (id) => {
    refuses(
      () => validateChanges([customer({}, id)]),
      RangeError,
      `Customer id ${String(id)} is not an integer`,
    );
  });

  it.each([1, null, false])('refuses user id %p', (id) => {
    refuses(() => validateChanges([user({}, id)]), TypeError, 'User id must be a string');
  });

  it('refuses an unknown collection', () => {
    refuses(
      () =>
        validateChanges([
          { collection: 'accounts', id: 'a', position: at(1n), set: {} } as unknown as DocumentChange,
        ]),
      TypeError,
      'Unknown collection accounts',
    );
  });

  it.each([
    ['a user field on a customer', customer({ age: 3 })],
    ['a customer field on a user', user({ email: 'e@x' })],
    ['a field of neither', user({ role: 'admin' })],
  ])('refuses %s', (_, change) => {
    const field = Object.keys(change.set!)[0];
    refuses(() => validateChanges([change]), RangeError, `Unknown field ${field}`);
  });

  it.each([
    [customer({ id: '1' }), 'id', 'number'],
    [customer({ name: 7 }), 'name', 'string'],
    [customer({ email: null }), 'email', 'string'],
    [customer({ createdon: 0 }), 'createdon', 'string'],
    [user({ id: 1 }), 'id', 'string'],
    [user({ name: 7 }), 'name', 'string'],
    [user({ age: '36' }), 'age', 'number'],
    [user({ createdon: 1 }), 'createdon', 'string'],
    [user({ modifiedon: 1 }), 'modifiedon', 'string'],
    [user({ revision: '1' }), 'revision', 'number'],
  ])('refuses a value of the wrong type: %#', (change, field, type) => {
    refuses(() => validateChanges([change]), TypeError, `Field ${field} must be a ${type}`);
  });

  it('refuses a change that would set another id than its document’s', () => {
    refuses(
      () => validateChanges([customer({ id: 2 }, 1)]),
      RangeError,
      'A change to document 1 cannot set id 2',
    );
    refuses(
      () => validateChanges([user({ id: 'u-2' }, 'u-1')]),
      RangeError,
      'A change to document u-1 cannot set id "u-2"',
    );
  });
});

describe('validateListQuery', () => {
  it.each([
    { offset: 0, limit: 0 },
    { offset: 5, limit: 100, gt: -1, lt: 1.5 },
    { offset: 0, limit: 1, gt: Number.NEGATIVE_INFINITY, lt: Number.POSITIVE_INFINITY },
  ])('accepts %p', (query) => {
    expect(() => validateListQuery(query)).not.toThrow();
  });

  it.each([
    [{ offset: -1, limit: 1 }, 'offset must be a non-negative integer'],
    [{ offset: 0.5, limit: 1 }, 'offset must be a non-negative integer'],
    [{ offset: Number.NaN, limit: 1 }, 'offset must be a non-negative integer'],
    [{ offset: 0, limit: -1 }, 'limit must be a non-negative integer'],
    [{ offset: 0, limit: 2.5 }, 'limit must be a non-negative integer'],
    [{ offset: 0, limit: 2 ** 53 }, 'limit must be a non-negative integer'],
    [{ offset: 0, limit: 1, gt: Number.NaN }, 'gt and lt must be numbers'],
    [{ offset: 0, limit: 1, lt: Number.NaN }, 'gt and lt must be numbers'],
  ])('refuses %p', (query, message) => {
    refuses(() => validateListQuery(query), RangeError, message);
  });
});
