import { AlreadyExistsError, ValidationError } from '../shared/domain-error';
import { specFor } from '../shared/decider.spec-helper';
import { assignCustomerNumbers, customerDecider } from './customer.aggregate';
import { CustomerRegistered } from './customer.events';

const given = specFor(customerDecider);
const T0 = '2026-11-22T09:15:00.000Z';
const register = (name: unknown, email: unknown) => ({
  type: 'RegisterCustomer' as const,
  customerId: 7,
  name,
  email,
  now: T0,
});
const registered: CustomerRegistered = {
  type: 'CustomerRegistered.v1',
  data: { customerId: 7, name: 'Ada Lovelace', email: 'ada@example.com', createdon: T0 },
};

describe('Customer', () => {
  it('registers a customer', () => {
    given([]).when(register(' Ada Lovelace ', 'ada@example.com')).then([registered]);
  });

  it('refuses a second registration under the same number', () => {
    given([registered]).when(register('Ada', 'ada@example.com')).thenThrows(AlreadyExistsError);
  });

  it.each([
    ['', 'ada@example.com'],
    ['Ada', 'ada'],
    ['Ada', 'ada@localhost'],
    ['Ada', `${'a'.repeat(250)}@example.com`],
  ])('refuses name %p with e-mail %p', (name, email) => {
    given([]).when(register(name, email)).thenThrows(ValidationError);
  });

  it('names each invalid field, and says which customer exists', () => {
    given([])
      .when(register(' ', 'ada'))
      .thenFails(ValidationError, {
        errors: [
          { field: 'name', message: 'must be 1 to 200 characters long after trimming' },
          { field: 'email', message: 'must be an e-mail address' },
        ],
      });
    given([registered])
      .when(register('Ada', 'ada@example.com'))
      .thenFails(AlreadyExistsError, { message: 'Customer 7 already exists' });
  });

  it('hands out numbers after the ones already taken', () => {
    expect(assignCustomerNumbers(0, 2).map((event) => event.data.customerId)).toEqual([1, 2]);
    expect(assignCustomerNumbers(5, 3).map((event) => event.data.customerId)).toEqual([6, 7, 8]);
  });
});
