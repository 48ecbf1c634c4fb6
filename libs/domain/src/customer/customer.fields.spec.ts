import { fieldJsTypes } from '../shared/fields';
import { customerDecider } from './customer.aggregate';
import {
  CUSTOMER_CLIENT_FIELD_NAMES,
  CUSTOMER_FIELD_NAMES,
  CUSTOMER_FIELDS,
  customerRepresentation,
  pickCustomerFields,
} from './customer.fields';

const T0 = '2026-11-22T09:15:00.000Z';

describe('customer fields', () => {
  it('declares the fields in record order, the client ones first', () => {
    expect(CUSTOMER_FIELD_NAMES).toEqual(['name', 'email', 'createdon']);
    expect(CUSTOMER_CLIENT_FIELD_NAMES).toEqual(['name', 'email']);
    expect(fieldJsTypes(CUSTOMER_FIELDS)).toEqual([
      ['name', 'string'],
      ['email', 'string'],
      ['createdon', 'string'],
    ]);
  });

  it('picks only declared fields that hold a value, in declaration order', () => {
    const source = { createdon: T0, email: 'a@b.io', extra: 'x', name: undefined } as Record<string, unknown>;
    const picked = pickCustomerFields(source);
    expect(Object.keys(picked)).toEqual(['email', 'createdon']);
    expect(pickCustomerFields(source, CUSTOMER_CLIENT_FIELD_NAMES)).toEqual({ email: 'a@b.io' });
  });

  it('represents a customer as its id and declared fields, dropping anything else', () => {
    const customer = { exists: true, createdon: T0, email: 'a@b.io', id: 7, name: 'Ada', pos: '1' };
    const shown = customerRepresentation(customer);
    expect(Object.keys(shown)).toEqual(['id', 'name', 'email', 'createdon']);
    expect(shown).toEqual({ id: 7, name: 'Ada', email: 'a@b.io', createdon: T0 });
  });

  it('writes a registration with its members in the order stored events have always had', () => {
    // The stored JSON (and so each event's hash) depends on this order.
    const [event] = customerDecider.decide(
      { type: 'RegisterCustomer', customerId: 7, fields: { email: 'a@b.io', name: 'Ada' }, now: T0 },
      customerDecider.initialState,
    );
    expect(JSON.stringify(event.data)).toBe(
      `{"customerId":7,"name":"Ada","email":"a@b.io","createdon":"${T0}"}`,
    );
  });
});
