import { customerStreamName, MAX_CUSTOMER_NUMBER } from '../customer/customer.events';
import { userStreamName } from '../user/user.events';
import { ErasedError, erasedSubjectOf, SubjectErased, throwIfErased } from './subject-erased';

const ERASED_AT = '2026-11-27T08:00:00.000Z';
const erasure: SubjectErased = {
  type: 'SubjectErased.v1',
  data: { subject: 'user-u-1', kind: 'user', erasedAt: ERASED_AT },
};
const registered = { type: 'UserRegistered.v2', data: { userId: 'u-1', name: null } };
const patched = { type: 'UserPatched.v1', data: { userId: 'u-1', changes: { name: null } } };

describe('throwIfErased', () => {
  it('lets a stream without its SubjectErased.v1 be read', () => {
    expect(() => throwIfErased([], 'User')).not.toThrow();
    expect(() => throwIfErased([registered, patched], 'User')).not.toThrow();
  });

  it.each([
    ['last', [registered, patched, erasure]],
    ['first (a tail read after it)', [erasure, patched]],
    ['alone', [erasure]],
  ])('refuses the subject with its SubjectErased.v1 %s: erased, naming what and when', (_where, events) => {
    let thrown: unknown;
    try {
      throwIfErased(events, 'Customer');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ErasedError);
    expect(thrown).toMatchObject({ code: 'erased', erasedAt: ERASED_AT, message: 'Customer was erased' });
  });

  it('answers the first erasure when a stream holds two', () => {
    const again = { ...erasure, data: { ...erasure.data, erasedAt: '2026-11-28T00:00:00.000Z' } };
    expect(() => throwIfErased([registered, erasure, again], 'User')).toThrow(
      expect.objectContaining({ erasedAt: ERASED_AT }) as Error,
    );
  });
});

describe('erasedSubjectOf', () => {
  const of = (subject: string, kind: SubjectErased['data']['kind']) =>
    erasedSubjectOf({ subject, kind, erasedAt: ERASED_AT });

  it('reads a person by the user id its stream names, whatever that id holds', () => {
    expect(of(userStreamName('u-1'), 'user')).toEqual({ kind: 'user', userId: 'u-1' });
    expect(of(userStreamName('0192f0c4-7b1e-7c3a-9d2e-1f2a3b4c5d6e'), 'user')).toEqual({
      kind: 'user',
      userId: '0192f0c4-7b1e-7c3a-9d2e-1f2a3b4c5d6e',
    });
    expect(of('user-customer-7', 'user')).toEqual({ kind: 'user', userId: 'customer-7' });
  });

  it('reads a customer by its number, to the largest', () => {
    expect(of(customerStreamName(1), 'customer')).toEqual({ kind: 'customer', customerId: 1 });
    expect(of(customerStreamName(MAX_CUSTOMER_NUMBER), 'customer')).toEqual({
      kind: 'customer',
      customerId: MAX_CUSTOMER_NUMBER,
    });
  });

  it.each([
    ['user-', 'user'],
    ['customer-7', 'user'],
    ['user-u-1', 'customer'],
    ['customer-', 'customer'],
    ['customer-07', 'customer'],
    ['customer-0', 'customer'],
    ['customer-1000000000000000', 'customer'],
    ['customer-x', 'customer'],
    ['7', 'customer'],
  ] as const)('refuses %p as a %s: no such stream is written', (subject, kind) => {
    expect(() => of(subject, kind)).toThrow(
      `SubjectErased.v1 names "${subject}", which is no ${kind}'s stream`,
    );
  });
});
