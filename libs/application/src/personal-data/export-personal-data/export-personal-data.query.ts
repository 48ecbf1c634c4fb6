import { Query } from '@nestjs/cqrs';
import { Principal } from '../../shared/principal';
import { AuditRecord } from '../../audit/audit-record';

/** Whose data: a person (a user, with its account if it has one) or a customer. */
export type ExportSubject = { kind: 'user'; id: string } | { kind: 'customer'; id: number };

/**
 * The sessions an export lists at most: the newest ones. A person who logs in with Basic
 * credentials all day starts a session each time, and mints tokens within each: the document stays
 * bounded however many there are. `omitted.sessions` says how many older ones were left out (the
 * admin audit, GET /api/v1/audit/events?stream=session-<id>, still has them).
 */
export const EXPORT_SESSION_LIMIT = 1000;

/** The audit records of the listed sessions' streams at most (a session holds one per token). */
export const EXPORT_SESSION_RECORD_LIMIT = 20_000;

/** One value a personal field held, from the event that set it (API.md "Personal data"). */
export interface PersonalValueChange {
  /** The value set: plaintext, or null once the subject is erased. */
  value: unknown;
  /** When the writer decided the change (the event's occurredAt). */
  occurredAt: string;
  /** When the store recorded it. */
  recordedAt: string;
  /** Who made it: an account id, `cli:<OS user>` or `system`. */
  actor: string;
  /** The event's position in the history, as the audit shows it. */
  position: string;
}

/** Each personal field's values, oldest first: the first is the value registered. */
export type PersonalValueHistory<F extends string> = Record<F, PersonalValueChange[]>;

export interface ExportedSession {
  id: string;
  /** How it began: Basic credentials (`basic`), the only way one begins. */
  method: string;
  startedAt: string;
  /** No token of the session works after it. */
  expiresAt: string;
  /** When it was ended (DELETE /api/v1/account/tokens/current), null if it never was. */
  endedAt: string | null;
  /** Access tokens issued in it, its first included. */
  tokens: number;
}

/** The e-mails the service sent the person (their content held secrets and is not kept). */
export type SentEmailKind = 'invitation' | 'password-reset' | 'password-change';

export interface SentEmail {
  kind: SentEmailKind;
  /** The address it went to: the account's then. */
  to: unknown;
  sentAt: string;
  recordedAt: string;
}

interface ExportBase {
  /** RFC 3339 UTC with milliseconds: when the export was read. */
  exportedAt: string;
  /**
   * The audit records (GET /api/v1/audit/events's shape, secrets redacted) of the subject's
   * streams, oldest first by position.
   */
  audit: AuditRecord[];
}

export interface UserExport extends ExportBase {
  subject: { kind: 'user'; id: string };
  /** The user's account, null for a user without one. */
  accountId: string | null;
  personalData: PersonalValueHistory<'name' | 'age' | 'email'>;
  /** The account's sessions, oldest first: the newest, within EXPORT_SESSION_LIMIT and EXPORT_SESSION_RECORD_LIMIT. */
  sessions: ExportedSession[];
  /** The e-mails sent to the account, oldest first. */
  emails: SentEmail[];
  /** What the limits left out. */
  omitted: { sessions: number };
}

export interface CustomerExport extends ExportBase {
  subject: { kind: 'customer'; id: number };
  personalData: PersonalValueHistory<'name' | 'email'>;
}

export type PersonalDataExport = UserExport | CustomerExport;

/**
 * Every personal value held about a subject with its history, what the service did with it, and
 * the audit of its streams, built from the event history (GDPR articles 15 and 20). `principal`:
 * for a user, the caller over HTTP, checked as GET /users/{id} checks it; null for the CLI, whose
 * operator holds the store itself. A customer's export is for admins only, whom its route's guard
 * admits (as every admin route's).
 */
export class ExportPersonalDataQuery extends Query<PersonalDataExport> {
  constructor(
    readonly subject: ExportSubject,
    readonly principal: Principal | null,
  ) {
    super();
  }
}

/** A file name for the export's Content-Disposition: only characters every client keeps. */
export const exportFileName = (subject: ExportSubject): string =>
  `chronicle-${subject.kind}-${String(subject.id).replace(/[^A-Za-z0-9._-]/g, '_')}-export.json`;
