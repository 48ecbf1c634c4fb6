import { DomainEvent } from '../shared/event';

export type CustomerRegistered = DomainEvent<
  'CustomerRegistered.v1',
  { customerId: number; name: string; email: string; createdon: string }
>;

/** Appended to the customer number sequence: the number is taken, whatever happens next. */
export type CustomerNumberAssigned = DomainEvent<'CustomerNumberAssigned.v1', { customerId: number }>;

export type CustomerEvent = CustomerRegistered;

export const customerStreamName = (customerId: number): string => `customer-${customerId}`;

/** Customer ids are integers: this stream hands them out, one event per number, in order. */
export const CUSTOMER_SEQUENCE_STREAM = 'sequence-customer';
