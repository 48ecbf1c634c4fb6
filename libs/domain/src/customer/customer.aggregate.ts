import { Decider } from '../shared/decider';
import { AlreadyExistsError, NotFoundError } from '../shared/domain-error';
import { Initial } from '../shared/event';
import { CustomerEvent, CustomerNumberAssigned } from './customer.events';
import { CUSTOMER_CLIENT_FIELD_NAMES, CustomerClientFields } from './customer.fields';

export interface Customer extends CustomerClientFields {
  exists: true;
  id: number;
  createdon: string;
}
export type CustomerState = Initial | Customer;
export const initialCustomerState: CustomerState = { exists: false };

/** Registers a customer with fields already parsed (parseCustomerFields) at the edge. */
export interface RegisterCustomer {
  type: 'RegisterCustomer';
  customerId: number;
  fields: CustomerClientFields;
  now: string;
}

/** A merge patch (RFC 7396), already parsed into the values it sets (parseCustomerFields). */
export interface ChangeCustomer {
  type: 'ChangeCustomer';
  values: Partial<CustomerClientFields>;
}

export type CustomerCommand = RegisterCustomer | ChangeCustomer;

export function decideCustomer(command: CustomerCommand, state: CustomerState): CustomerEvent[] {
  switch (command.type) {
    case 'RegisterCustomer': {
      if (state.exists) throw new AlreadyExistsError(`Customer ${command.customerId}`);
      const { name, email } = command.fields;
      return [
        {
          type: 'CustomerRegistered.v1',
          data: { customerId: command.customerId, name, email, createdon: command.now },
        },
      ];
    }
    case 'ChangeCustomer': {
      if (!state.exists) throw new NotFoundError('Customer');
      // Only what really changes: a patch that changes nothing emits nothing.
      const changes: Partial<CustomerClientFields> = {};
      for (const field of CUSTOMER_CLIENT_FIELD_NAMES) {
        const value = command.values[field];
        if (value !== undefined && value !== state[field]) changes[field] = value;
      }
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'CustomerChanged.v1', data: { customerId: state.id, changes } }];
    }
  }
}

export function evolveCustomer(state: CustomerState, event: CustomerEvent): CustomerState {
  switch (event.type) {
    case 'CustomerRegistered.v1':
      return {
        exists: true,
        id: event.data.customerId,
        name: event.data.name,
        email: event.data.email,
        createdon: event.data.createdon,
      };
    case 'CustomerChanged.v1':
      if (!state.exists) return state;
      return { ...state, ...changedFields(event.data.changes) };
  }
}

/** The client fields a change names, and nothing else (a stored event is not trusted to hold only those). */
export function changedFields(changes: Partial<CustomerClientFields>): Partial<CustomerClientFields> {
  const fields: Partial<CustomerClientFields> = {};
  for (const field of CUSTOMER_CLIENT_FIELD_NAMES) {
    if (changes[field] !== undefined) fields[field] = changes[field];
  }
  return fields;
}

/** The next customer numbers after a sequence stream of `revisionCount` events: 1, 2, 3, ... */
export function assignCustomerNumbers(revisionCount: number, count: number): CustomerNumberAssigned[] {
  return Array.from({ length: count }, (_, i) => ({
    type: 'CustomerNumberAssigned.v1' as const,
    data: { customerId: revisionCount + i + 1 },
  }));
}

export const customerDecider: Decider<CustomerState, CustomerCommand, CustomerEvent> = {
  initialState: initialCustomerState,
  decide: decideCustomer,
  evolve: evolveCustomer,
};

/** A customer record as every reader sees it: its id, then its fields in declaration order. */
export function customerRecord(
  customer: Customer,
): { id: number } & CustomerClientFields & { createdon: string } {
  return { id: customer.id, name: customer.name, email: customer.email, createdon: customer.createdon };
}
