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

/**
 * The largest customer number: fifteen digits, as the API's document publishes it. Numbers are
 * handed out in order from 1, so none comes near it; it lies well within Number.isSafeInteger.
 */
export const MAX_CUSTOMER_NUMBER = 10 ** 15 - 1;

/**
 * The one reading of a customer number written as text (a path segment, a CLI argument, the tail
 * of a `customer-<n>` stream name): decimal digits without a leading zero, 1 to
 * MAX_CUSTOMER_NUMBER. Undefined for anything else, which names no customer.
 */
export function parseCustomerNumber(text: string): number | undefined {
  if (!/^[1-9]\d*$/.test(text)) return undefined;
  const customerId = Number(text);
  return customerId <= MAX_CUSTOMER_NUMBER ? customerId : undefined;
}

/** Customer ids are integers: this stream hands them out, one event per number, in order. */
export const CUSTOMER_SEQUENCE_STREAM = 'sequence-customer';
