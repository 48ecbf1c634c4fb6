import { AlreadyExistsError, ValidationError } from '../shared/domain-error';
import { Initial } from '../shared/event';
import { checkEmail, checkName, isFieldError } from '../shared/values';
import { CustomerEvent, CustomerNumberAssigned } from './customer.events';

export interface Customer {
  exists: true;
  id: number;
  name: string;
  email: string;
  createdon: string;
}
export type CustomerState = Initial | Customer;
export const initialCustomerState: CustomerState = { exists: false };

export interface RegisterCustomer {
  type: 'RegisterCustomer';
  customerId: number;
  name: unknown;
  email: unknown;
  now: string;
}

/** Checks a new customer's values before a number is spent on it. */
export function validateNewCustomer(name: unknown, email: unknown): { name: string; email: string } {
  const checkedName = checkName('name', name);
  const checkedEmail = checkEmail('email', email);
  const errors = [checkedName, checkedEmail].filter(isFieldError);
  if (errors.length > 0) throw new ValidationError(errors);
  return { name: checkedName as string, email: checkedEmail as string };
}

export function decideCustomer(command: RegisterCustomer, state: CustomerState): CustomerEvent[] {
  if (state.exists) throw new AlreadyExistsError(`Customer ${command.customerId}`);
  const { name, email } = validateNewCustomer(command.name, command.email);
  return [
    {
      type: 'CustomerRegistered.v1',
      data: { customerId: command.customerId, name, email, createdon: command.now },
    },
  ];
}

export function evolveCustomer(_state: CustomerState, event: CustomerEvent): CustomerState {
  return {
    exists: true,
    id: event.data.customerId,
    name: event.data.name,
    email: event.data.email,
    createdon: event.data.createdon,
  };
}

/** The next customer numbers after a sequence stream of `revisionCount` events: 1, 2, 3, ... */
export function assignCustomerNumbers(revisionCount: number, count: number): CustomerNumberAssigned[] {
  return Array.from({ length: count }, (_, i) => ({
    type: 'CustomerNumberAssigned.v1' as const,
    data: { customerId: revisionCount + i + 1 },
  }));
}

export const customerDecider = {
  initialState: initialCustomerState,
  decide: decideCustomer,
  evolve: evolveCustomer,
};
