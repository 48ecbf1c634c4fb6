import { position, RecordedEvent } from '@chronicle/event-store';
import { recordedEvent } from '@chronicle/event-store/testing';
import { ALL_PROJECTIONS } from './all-projections';
import { customersProjection } from './customers.projection';
import { foldUserDocument, usersProjection } from './users.projection';

const recorded = (type: string, data: Record<string, unknown>, at = 7): RecordedEvent =>
  recordedEvent(type, { id: `event-${at}`, data, stream: 'any-1', position: position(at, at - 1) });

const customerRegistered = recorded('CustomerRegistered.v1', {
  customerId: 42,
  name: 'Acme',
  email: 'acme@example.com',
  createdon: '2026-11-22T09:15:00.000Z',
});
const userRegistered = recorded('UserRegistered.v2', {
  userId: 'u-1',
  accountId: 'a-1',
  name: 'Ada',
  age: 36,
  createdon: '2026-11-22T09:15:00.000Z',
});
const patch = (changes: Record<string, unknown>, revision = 3): RecordedEvent => ({
  ...recorded('UserPatched.v1', { userId: 'u-1', changes, modifiedon: '2026-11-23T10:00:00.000Z' }, 9),
  revision,
});

/** Events of every other kind: no read model is built from them. */
const unrelated = [
  recorded('AccountOpened.v1', {
    accountId: 'a-1',
    email: 'a@example.com',
    userId: 'u-1',
    roles: [],
    passwordHash: 'h',
  }),
  recorded('AccessTokenIssued.v1', { accountId: 'a-1', tokenId: 't', issuedAt: '', expiresAt: '' }),
  recorded('EmailReserved.v1', { accountId: 'a-1' }),
  recorded('CustomerNumberAssigned.v1', { customerId: 42 }),
  recorded('CustomerRegistered.v2', { customerId: 42 }),
];

describe('customersProjection', () => {
  it('turns CustomerRegistered into the customer document at the event position', () => {
    expect(customersProjection.project(customerRegistered)).toEqual([
      {
        collection: 'customers',
        id: 42,
        position: position(7, 6),
        set: { id: 42, name: 'Acme', email: 'acme@example.com', createdon: '2026-11-22T09:15:00.000Z' },
      },
    ]);
  });

  it('turns CustomerChanged into the changed fields only, whatever else the event holds', () => {
    const changed = recorded(
      'CustomerChanged.v1',
      {
        customerId: 42,
        changes: { email: 'sales@acme.example', createdon: 'not a client field' },
      },
      11,
    );
    expect(customersProjection.project(changed)).toEqual([
      { collection: 'customers', id: 42, position: position(11, 10), set: { email: 'sales@acme.example' } },
    ]);
  });

  it.each([...unrelated, userRegistered, patch({ age: 1 })].map((event) => [event.type, event]))(
    'ignores %s',
    (_, event) => {
      expect(customersProjection.project(event)).toEqual([]);
    },
  );
});

describe('usersProjection', () => {
  it('turns UserRegistered into the full user, last modified when created', () => {
    expect(usersProjection.project(userRegistered)).toEqual([
      {
        collection: 'users',
        id: 'u-1',
        position: position(7, 6),
        set: {
          id: 'u-1',
          name: 'Ada',
          age: 36,
          createdon: '2026-11-22T09:15:00.000Z',
          modifiedon: '2026-11-22T09:15:00.000Z',
          revision: 0,
        },
      },
    ]);
  });

  it('sets only the changed fields and modifiedon for UserPatched', () => {
    expect(usersProjection.project(patch({ age: 37 }))).toEqual([
      {
        collection: 'users',
        id: 'u-1',
        position: position(9, 8),
        set: { age: 37, modifiedon: '2026-11-23T10:00:00.000Z', revision: 3 },
      },
    ]);
    expect(usersProjection.project(patch({ name: 'Ada L.', age: 0 }))[0].set).toEqual({
      name: 'Ada L.',
      age: 0,
      modifiedon: '2026-11-23T10:00:00.000Z',
      revision: 3,
    });
  });

  it('copies nothing but name and age from a patch', () => {
    const [change] = usersProjection.project(
      patch({ name: 'Eve', createdon: '1970-01-01T00:00:00.000Z', id: 'u-2' }),
    );

    expect(change.id).toBe('u-1');
    expect(change.set).toEqual({ name: 'Eve', modifiedon: '2026-11-23T10:00:00.000Z', revision: 3 });
  });

  it.each([...unrelated, customerRegistered].map((event) => [event.type, event]))(
    'ignores %s',
    (_, event) => {
      expect(usersProjection.project(event)).toEqual([]);
    },
  );
});

describe('foldUserDocument', () => {
  const registeredDoc = {
    id: 'u-1',
    name: 'Ada',
    age: 36,
    createdon: '2026-11-22T09:15:00.000Z',
    modifiedon: '2026-11-22T09:15:00.000Z',
    revision: 0,
  };

  it('builds the document from the whole stream, as the projection would', () => {
    expect(foldUserDocument('u-1', null, [userRegistered, patch({ age: 37 }, 1)])).toEqual({
      ...registeredDoc,
      age: 37,
      modifiedon: '2026-11-23T10:00:00.000Z',
      revision: 1,
    });
  });

  it('brings a stored document up to date with the events after it, in their order', () => {
    const folded = foldUserDocument('u-1', registeredDoc, [
      patch({ age: 40 }, 1),
      patch({ name: 'Ada L.' }, 2),
    ]);
    expect(folded).toEqual({
      ...registeredDoc,
      name: 'Ada L.',
      age: 40,
      modifiedon: '2026-11-23T10:00:00.000Z',
      revision: 2,
    });
    expect(Object.keys(folded!)).toEqual(['id', 'name', 'age', 'createdon', 'modifiedon', 'revision']);
  });

  it('keeps a document no event followed, and knows no user without document or event', () => {
    expect(foldUserDocument('u-1', registeredDoc, [])).toEqual(registeredDoc);
    expect(foldUserDocument('u-1', null, [])).toBeNull();
  });
});

describe('ALL_PROJECTIONS', () => {
  it('holds each projection once, under its own name', () => {
    expect(ALL_PROJECTIONS.map((projection) => projection.name)).toEqual(['customers', 'users']);
  });
});

describe('projections of an erased subject', () => {
  const erasedUser = {
    ...userRegistered,
    data: { ...userRegistered.data, name: null, age: null },
    erased: true as const,
  };
  const erasedPatch = { ...patch({ name: null }), erased: true as const };
  const erasedCustomer = {
    ...customerRegistered,
    data: { ...customerRegistered.data, name: null, email: null },
    erased: true as const,
  };

  it('project nothing of the events whose values read null: their document is about to be deleted', () => {
    for (const event of [erasedUser, erasedPatch]) expect(usersProjection.project(event)).toEqual([]);
    expect(customersProjection.project(erasedCustomer)).toEqual([]);
  });

  it('delete the document at the erasure, in the collection of its kind only', () => {
    const userErased = recorded('SubjectErased.v1', { subject: 'user-u-1', kind: 'user', erasedAt: 'T' }, 12);
    const customerErased = recorded(
      'SubjectErased.v1',
      { subject: 'customer-42', kind: 'customer', erasedAt: 'T' },
      13,
    );
    expect(usersProjection.project(userErased)).toEqual([
      { collection: 'users', id: 'u-1', position: userErased.position, remove: true },
    ]);
    expect(customersProjection.project(userErased)).toEqual([]);
    expect(customersProjection.project(customerErased)).toEqual([
      { collection: 'customers', id: 42, position: customerErased.position, remove: true },
    ]);
    expect(usersProjection.project(customerErased)).toEqual([]);
    expect(foldUserDocument('u-1', null, [userRegistered, userErased])).toBeNull();
  });
});
