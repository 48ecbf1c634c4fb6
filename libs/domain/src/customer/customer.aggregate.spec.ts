import { AlreadyExistsError, NotFoundError, ValidationError } from '../shared/domain-error';
import { ErasedError, SubjectErased } from '../erasure/subject-erased';
import { specFor } from '../shared/decider.spec-helper';
import {
  assignCustomerNumbers,
  customerDecider,
  evolveCustomer,
  initialCustomerState,
} from './customer.aggregate';
import { CustomerChanged, CustomerRegistered } from './customer.events';
import { parseCustomerFields } from './customer.fields';

const given = specFor(customerDecider);
const T0 = '2026-11-22T09:15:00.000Z';
const register = (name: string, email: string) => ({
  type: 'RegisterCustomer' as const,
  customerId: 7,
  fields: { name, email },
  now: T0,
});
const change = (values: { name?: string; email?: string }) => ({ type: 'ChangeCustomer' as const, values });
const registered: CustomerRegistered = {
  type: 'CustomerRegistered.v1',
  data: { customerId: 7, name: 'Ada Lovelace', email: 'ada@example.com', createdon: T0 },
};

describe('Customer', () => {
  it('registers a customer', () => {
    given([]).when(register('Ada Lovelace', 'ada@example.com')).then([registered]);
  });

  it('refuses a second registration under the same number, saying which customer exists', () => {
    given([registered])
      .when(register('Ada', 'ada@example.com'))
      .thenFails(AlreadyExistsError, { message: 'Customer 7 already exists' });
  });

  it('changes only the fields whose values differ', () => {
    given([registered])
      .when(change({ name: 'Ada Lovelace', email: 'ada@analytical.example' }))
      .then([
        { type: 'CustomerChanged.v1', data: { customerId: 7, changes: { email: 'ada@analytical.example' } } },
      ]);
  });

  it('emits nothing for a patch that changes nothing', () => {
    given([registered])
      .when(change({ name: 'Ada Lovelace' }))
      .then([]);
    given([registered]).when(change({})).then([]);
  });

  it('refuses to change a customer that does not exist', () => {
    given([])
      .when(change({ name: 'Ada' }))
      .thenThrows(NotFoundError);
  });

  it('folds a change over the registration, keeping the rest', () => {
    const changed: CustomerChanged = {
      type: 'CustomerChanged.v1',
      data: { customerId: 7, changes: { name: 'Ada' } },
    };
    expect(evolveCustomer(evolveCustomer(initialCustomerState, registered), changed)).toEqual({
      exists: true,
      id: 7,
      name: 'Ada',
      email: 'ada@example.com',
      createdon: T0,
    });
  });

  it('hands out numbers after the ones already taken', () => {
    expect(assignCustomerNumbers(0, 2).map((event) => event.data.customerId)).toEqual([1, 2]);
    expect(assignCustomerNumbers(5, 3).map((event) => event.data.customerId)).toEqual([6, 7, 8]);
  });
});

describe('parseCustomerFields', () => {
  const errorsOf = (input: Record<string, unknown>, mode: 'all' | 'patch') => {
    try {
      parseCustomerFields(input, mode as 'patch');
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      return (error as ValidationError).errors;
    }
    throw new Error('expected a ValidationError');
  };

  it('parses a new customer, trimming the name and the address', () => {
    expect(parseCustomerFields({ name: ' Ada ', email: ' ada@example.com ' }, 'all')).toEqual({
      name: 'Ada',
      email: 'ada@example.com',
    });
  });

  it.each([
    ['', 'ada@example.com'],
    ['Ada', 'ada'],
    ['Ada', 'ada@localhost'],
    ['Ada', `${'a'.repeat(250)}@example.com`],
  ])('refuses name %p with e-mail %p', (name, email) => {
    expect(() => parseCustomerFields({ name, email }, 'all')).toThrow(ValidationError);
  });

  it('names each invalid field, each missing one and each unknown member', () => {
    expect(errorsOf({ name: ' ', email: 'ada' }, 'all')).toEqual([
      { field: 'name', message: 'must be 1 to 200 characters long after trimming' },
      { field: 'email', message: 'must be an e-mail address' },
    ]);
    expect(errorsOf({ name: 'Ada' }, 'all')).toEqual([{ field: 'email', message: 'is required' }]);
    expect(errorsOf({ id: 3, createdon: T0 }, 'patch')).toEqual([
      { field: 'id', message: 'is not a field that can be changed' },
      { field: 'createdon', message: 'is not a field that can be changed' },
    ]);
  });

  it('takes any subset in a patch and refuses null', () => {
    expect(parseCustomerFields({ email: 'b@example.com' }, 'patch')).toEqual({ email: 'b@example.com' });
    expect(errorsOf({ name: null }, 'patch')).toEqual([
      { field: 'name', message: 'is required and cannot be removed' },
    ]);
  });
});

describe('Customer erasure', () => {
  const T1 = '2026-11-22T11:00:00.000Z';
  const erase = { type: 'EraseCustomer' as const, customerId: 7, now: T1 };
  const erased: SubjectErased = {
    type: 'SubjectErased.v1',
    data: { subject: 'customer-7', kind: 'customer', erasedAt: T1 },
  };
  const registeredAsErased = {
    ...registered,
    data: { ...registered.data, name: null, email: null },
  } as unknown as CustomerRegistered;

  it('erases a customer that exists, once, keeping nothing personal', () => {
    given([registered]).when(erase).then([erased]);
    given([registeredAsErased, erased]).when(erase).then([]);
    expect(given([registeredAsErased, erased]).state).toEqual({ exists: false, erasedAt: T1 });
  });

  it('answers erased to a change, and not-found to erasing a customer that never existed', () => {
    given([registeredAsErased, erased])
      .when(change({ name: 'Ada' }))
      .thenFails(ErasedError, { code: 'erased', message: 'Customer was erased' });
    given([]).when(erase).thenFails(NotFoundError, { code: 'not-found' });
    given([registeredAsErased, erased])
      .when(register('Ada', 'ada@example.com'))
      .thenFails(AlreadyExistsError, {});
  });
});
