import { eventSchemaOf } from '@chronicle/domain';
import { AuthProvenance, EventData, formatPosition, RecordedEvent } from '@chronicle/event-store';

export const REDACTED = '[redacted]';

/** One event as an auditor sees it (API.md "Admin and operations"). */
export interface AuditRecord {
  /** The event's own id, which causationId and requestId refer to. */
  id: string;
  position: string;
  stream: string;
  revision: number;
  type: string;
  occurredAt: string;
  /** Assigned by the store; never decreases with position. */
  recordedAt: string;
  actor: string;
  correlationId: string;
  causationId: string | null;
  /** Provenance: the client's own X-Request-Id, and how the writer authenticated (null before recorded). */
  clientRequestId: string | null;
  auth: AuthProvenance | null;
  data: EventData;
  /** Chains the event to its predecessor (`audit verify`). */
  hash: string;
  /** Present when the event's subject was erased: its personal values in `data` are null. */
  erased?: true;
  /** Present only when the stored hash does not follow from the event and its predecessor: why. */
  chainBroken?: string;
  /**
   * Asked for (`withChain`): the text whose SHA-256 is the stored hash, as the event and its
   * predecessor are stored now; null when the stored data holds a secret the audit never shows.
   */
  chained?: string | null;
}

/**
 * The event's data with every secret field its schema declares replaced by "[redacted]". A type
 * without a schema (written by a newer build, or never registered) has every field redacted:
 * what it holds is unknown, so nothing of it is shown.
 */
export function redactEventData(type: string, data: EventData): EventData {
  const secrets = secretFieldsIn(type, data);
  if (secrets.length === 0) return data;
  const redacted: EventData = { ...data };
  for (const field of secrets) redacted[field] = REDACTED;
  return redacted;
}

/** The fields of `data` that the audit never shows. */
export function secretFieldsIn(type: string, data: EventData): string[] {
  const secretFields: readonly string[] = eventSchemaOf(type)?.secretFields ?? Object.keys(data);
  return secretFields.filter((field) => Object.prototype.hasOwnProperty.call(data, field));
}

export function toAuditRecord(event: RecordedEvent): AuditRecord {
  return {
    id: event.id,
    position: formatPosition(event.position),
    stream: event.stream,
    revision: event.revision,
    type: event.type,
    occurredAt: event.metadata.occurredAt,
    recordedAt: event.recordedAt,
    actor: event.metadata.actor,
    correlationId: event.metadata.correlationId,
    causationId: event.metadata.causationId ?? null,
    clientRequestId: event.metadata.clientRequestId ?? null,
    auth: event.metadata.auth ?? null,
    data: redactEventData(event.type, event.data),
    hash: event.hash,
    ...(event.erased === true ? { erased: true } : {}),
  };
}
