import { SubjectErased } from '../erasure/subject-erased';
import { DomainEvent } from '../shared/event';
import { CustomerClientFields, CustomerFields } from './customer.fields';

export type CustomerRegistered = DomainEvent<
  'CustomerRegistered.v1',
  { customerId: number } & CustomerFields
>;

/** A merge patch that changed something: only the fields whose values really changed. */
export type CustomerChanged = DomainEvent<
  'CustomerChanged.v1',
  { customerId: number; changes: Partial<CustomerClientFields> }
>;

/** Appended to the customer number sequence: the number is taken, whatever happens next. */
export type CustomerNumberAssigned = DomainEvent<'CustomerNumberAssigned.v1', { customerId: number }>;

export type CustomerEvent = CustomerRegistered | CustomerChanged | SubjectErased;

export const customerStreamName = (customerId: number): string => `customer-${customerId}`;

/** Customer ids are integers: this stream hands them out, one event per number, in order. */
export const CUSTOMER_SEQUENCE_STREAM = 'sequence-customer';
