import { decideErasure, ErasedError, ErasedSubject, isErasedSubject } from '../erasure/subject-erased';
import { Decider } from '../shared/decider';
import { AlreadyExistsError, NotFoundError } from '../shared/domain-error';
import { Initial } from '../shared/event';
import { CustomerEvent, CustomerNumberAssigned } from './customer.events';
import {
  CUSTOMER_CLIENT_FIELD_NAMES,
  CustomerClientFields,
  CustomerFields,
  CustomerRepresentation,
  pickCustomerFields,
} from './customer.fields';

export type Customer = { exists: true } & CustomerRepresentation;
export type CustomerState = Initial | Customer | ErasedSubject;
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

export interface EraseCustomer {
  type: 'EraseCustomer';
  customerId: number;
  now: string;
}

export type CustomerCommand = RegisterCustomer | ChangeCustomer | EraseCustomer;

export function decideCustomer(command: CustomerCommand, state: CustomerState): CustomerEvent[] {
  switch (command.type) {
    case 'RegisterCustomer': {
      if (state.exists || isErasedSubject(state)) {
        throw new AlreadyExistsError(`Customer ${command.customerId}`);
      }
      const fields = pickCustomerFields(command.fields, CUSTOMER_CLIENT_FIELD_NAMES) as CustomerClientFields;
      return [
        {
          type: 'CustomerRegistered.v1',
          data: { customerId: command.customerId, ...fields, createdon: command.now },
        },
      ];
    }
    case 'ChangeCustomer': {
      if (isErasedSubject(state)) throw new ErasedError('Customer', state.erasedAt);
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
    case 'EraseCustomer':
      return decideErasure(state, `customer-${command.customerId}`, 'customer', command.now, 'Customer');
  }
}

export function evolveCustomer(state: CustomerState, event: CustomerEvent): CustomerState {
  switch (event.type) {
    case 'CustomerRegistered.v1':
      return {
        exists: true,
        id: event.data.customerId,
        ...(pickCustomerFields(event.data) as CustomerFields),
      };
    case 'CustomerChanged.v1':
      if (!state.exists) return state;
      // The client fields a change names, and nothing else: a stored event is not trusted to hold only those.
      return { ...state, ...pickCustomerFields(event.data.changes, CUSTOMER_CLIENT_FIELD_NAMES) };
    case 'SubjectErased.v1':
      return { exists: false, erasedAt: event.data.erasedAt };
  }
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
