import {
  AccountEvent,
  EmailReserved,
  PasswordResetRequested,
  ReservationsKeyed,
} from './account/account.events';
import { CustomerEvent, CustomerNumberAssigned } from './customer/customer.events';
import { HistoryProtected } from './erasure/history-protected';
import { SecurityEvent } from './security/security.events';
import { SessionEvent } from './session/session.events';
import { UserEvent } from './user/user.events';
import { CUSTOMER_FIELDS } from './customer/customer.fields';
import { personalFieldsOf } from './shared/fields';
import { USER_FIELDS } from './user/user.fields';

export type ChronicleEvent =
  | UserEvent
  | CustomerEvent
  | CustomerNumberAssigned
  | AccountEvent
  | EmailReserved
  | PasswordResetRequested
  | ReservationsKeyed
  | HistoryProtected
  | SessionEvent
  | SecurityEvent;
export type ChronicleEventType = ChronicleEvent['type'];

/** Whose personal data a value is (API.md "Personal data"): a person (named by the user id) or a customer. */
export interface PersonalSubject {
  readonly kind: 'user' | 'customer';
  readonly id: string;
}

/** Where an event type keeps personal values, and whose they are: stored encrypted under the subject's key. */
export interface PersonalData {
  subject(data: Readonly<Record<string, unknown>>): PersonalSubject;
  /** The data members holding personal values (within the object member `within`, when given). */
  fields: readonly string[];
  within?: string;
}

export interface EventSchema {
  /** Data members that hold secrets (hashes): redacted wherever events are shown. */
  secretFields: readonly string[];
  personal?: PersonalData;
}

const ofUser = (data: Readonly<Record<string, unknown>>): PersonalSubject => ({
  kind: 'user',
  id: String(data.userId),
});
const ofCustomer = (data: Readonly<Record<string, unknown>>): PersonalSubject => ({
  kind: 'customer',
  id: String(data.customerId),
});
const USER_PERSONAL_FIELDS = personalFieldsOf(USER_FIELDS);
const CUSTOMER_PERSONAL_FIELDS = personalFieldsOf(CUSTOMER_FIELDS);

/** Every event type the service writes; a new type must declare its secret fields here. */
export const EVENT_SCHEMAS: Record<ChronicleEventType, EventSchema> = {
  'UserRegistered.v2': { secretFields: [], personal: { subject: ofUser, fields: USER_PERSONAL_FIELDS } },
  'UserPatched.v1': {
    secretFields: [],
    personal: { subject: ofUser, fields: USER_PERSONAL_FIELDS, within: 'changes' },
  },
  'CustomerRegistered.v1': {
    secretFields: [],
    personal: { subject: ofCustomer, fields: CUSTOMER_PERSONAL_FIELDS },
  },
  'CustomerChanged.v1': {
    secretFields: [],
    personal: { subject: ofCustomer, fields: CUSTOMER_PERSONAL_FIELDS, within: 'changes' },
  },
  'CustomerNumberAssigned.v1': { secretFields: [] },
  // The account's address is its person's: the subject is the account's user.
  'AccountOpened.v1': { secretFields: ['passwordHash'], personal: { subject: ofUser, fields: ['email'] } },
  'AccountInvited.v1': { secretFields: [] },
  'AccessTokenIssued.v1': { secretFields: [] },
  'AccessTokenRevoked.v1': { secretFields: [] },
  'EmailReserved.v1': { secretFields: [] },
  'PasswordResetRequested.v2': { secretFields: [] },
  'ReservationsKeyed.v1': { secretFields: [] },
  'SubjectErased.v1': { secretFields: [] },
  'HistoryProtected.v1': { secretFields: [] },
  'AccountClosed.v1': { secretFields: [] },
  'ResetTokenIssued.v1': { secretFields: ['tokenHash'] },
  'PasswordResetEmailSent.v1': { secretFields: [] },
  'PasswordReset.v1': { secretFields: ['passwordHash'] },
  'PasswordChanged.v1': { secretFields: ['passwordHash'] },
  'PasswordRehashed.v1': { secretFields: ['passwordHash'] },
  'ResetTokensInvalidated.v1': { secretFields: [] },
  'AccessTokensRevoked.v1': { secretFields: [] },
  'PasswordChangeNoticeSent.v1': { secretFields: [] },
  'SessionStarted.v1': { secretFields: [] },
  'SessionTokenIssued.v1': { secretFields: [] },
  'SessionEnded.v1': { secretFields: [] },
  // The e-mail hash is keyed with the server secret: no one without it can test a guess.
  'LoginFailed.v1': { secretFields: [] },
  // The token id only, never the token: an id grants nothing.
  'AccessTokenRejected.v1': { secretFields: [] },
  'OldPasswordRejected.v1': { secretFields: [] },
  'AccessForbidden.v1': { secretFields: [] },
  'RateLimited.v1': { secretFields: [] },
  'ResetTokenRejected.v1': { secretFields: [] },
  'AuditRead.v1': { secretFields: [] },
};

export function isChronicleEventType(type: string): type is ChronicleEventType {
  return Object.prototype.hasOwnProperty.call(EVENT_SCHEMAS, type);
}

/**
 * A stored event of a type (or version) this build does not know, found where it would be decided
 * on or projected: written by a newer build (a rollback?). What it changed cannot be known, so
 * nothing is decided over it; an operator must run a build that knows it.
 */
export class UnknownEventTypeError extends Error {
  readonly code = 'unknown-event-type';
  constructor(
    readonly type: string,
    readonly stream: string,
    readonly position: string,
  ) {
    super(`${unknownEventTypeReason(type) ?? type}; found at position ${position} in ${stream}`);
    this.name = 'UnknownEventTypeError';
  }
}

/** Why an event of `type` (already upcast) cannot be used here, or null when this build knows it. */
export function unknownEventTypeReason(type: string): string | null {
  return isChronicleEventType(type)
    ? null
    : `${type} is not an event type this build knows (written by a newer build, and rolled back?)`;
}

/**
 * Older versions of event types this build still reads (an upcaster maps each to a newer one):
 * the audit's raw view shows them as stored, so they declare their secret fields too.
 */
export const LEGACY_EVENT_SCHEMAS: Readonly<Record<string, EventSchema>> = {
  'UserRegistered.v1': { secretFields: [], personal: { subject: ofUser, fields: USER_PERSONAL_FIELDS } },
  // Its plain hash also names its stream (`resetrequest-<emailHash>`), shown in every record:
  // redacting it in the data would hide nothing. Only a rewrite of the history removes it.
  'PasswordResetRequested.v1': { secretFields: [] },
};

/** The schema of a stored type, current or legacy; undefined for a type this build does not know. */
export function eventSchemaOf(type: string): EventSchema | undefined {
  if (isChronicleEventType(type)) return EVENT_SCHEMAS[type];
  return Object.prototype.hasOwnProperty.call(LEGACY_EVENT_SCHEMAS, type)
    ? LEGACY_EVENT_SCHEMAS[type]
    : undefined;
}
