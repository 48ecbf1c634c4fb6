import { ChronicleEvent, ChronicleEventType, EVENT_SCHEMAS, SecurityEventData } from '@chronicle/domain';
import { position, RecordedEvent } from '@chronicle/event-store';
import { REDACTED, redactEventData, toAuditRecord } from './audit-record';

type DataOf<T extends ChronicleEventType> = Extract<ChronicleEvent, { type: T }>['data'];

const T = '2026-11-22T09:15:00.000Z';
const ARGON2 = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNo';
const SHA256 = 'a'.repeat(64);

const SECURITY: SecurityEventData = {
  emailHash: SHA256.replace(/a/g, 'c'),
  accountId: 'a-1',
  client: '192.0.2.7',
  userAgent: 'curl/8.5.0',
  route: 'GET /customers',
  count: 3,
  firstAt: T,
  lastAt: T,
  overflow: false,
};

/**
 * One complete sample per event type. Typed by the domain's own event types, so adding an event
 * type (or a field) does not compile until its sample is here, and the tests below then hold the
 * new fields against EVENT_SCHEMAS.
 */
const SAMPLES: { [K in ChronicleEventType]: DataOf<K> } = {
  'UserRegistered.v2': { userId: 'u-1', accountId: 'a-1', name: 'Ada', age: 36, createdon: T },
  'UserPatched.v1': { userId: 'u-1', changes: { name: 'Ada L.', age: 37 }, modifiedon: T },
  'CustomerRegistered.v1': { customerId: 42, name: 'Acme', email: 'acme@example.com', createdon: T },
  'CustomerChanged.v1': { customerId: 42, changes: { email: 'sales@acme.example' } },
  'CustomerNumberAssigned.v1': { customerId: 42 },
  'AccountOpened.v1': {
    accountId: 'a-1',
    email: 'ada@example.com',
    userId: 'u-1',
    roles: ['user'],
    passwordHash: ARGON2,
    openedAt: T,
  },
  'AccountInvited.v1': { accountId: 'a-1', invitedAt: T, expiresAt: T },
  'AccessTokenIssued.v1': { accountId: 'a-1', tokenId: 't-1', issuedAt: T, expiresAt: T },
  'AccessTokenRevoked.v1': { accountId: 'a-1', tokenId: 't-1', revokedAt: T },
  'EmailReserved.v1': { accountId: 'a-1' },
  'PasswordResetRequested.v2': { reservation: `email-${SHA256}`, requestedAt: T },
  'ReservationsKeyed.v1': { keyId: '0123456789abcdef', accounts: 3, written: 2, conflicts: 0 },
  'SubjectErased.v1': { subject: 'user-u-1', kind: 'user', erasedAt: T },
  'HistoryProtected.v1': {
    oldHead: { position: '7', hash: 'a'.repeat(64), recordedAt: T },
    newHead: { position: '7', hash: 'b'.repeat(64), recordedAt: T },
    firstChanged: '2',
    events: 3,
    erasedSubjectEvents: 1,
    signature: 'c'.repeat(64),
  },
  'AccountClosed.v1': { accountId: 'a-1', userId: 'u-1', closedAt: T },
  'ResetTokenIssued.v1': {
    accountId: 'a-1',
    requestId: 'r-1',
    tokenId: 'rt-1',
    tokenHash: SHA256.replace(/a/g, 'b'),
    issuedAt: T,
    expiresAt: T,
    credentialsVersion: 0,
  },
  'PasswordResetEmailSent.v1': { accountId: 'a-1', requestId: 'r-1', tokenId: 'rt-1', sentAt: T },
  'PasswordReset.v1': {
    accountId: 'a-1',
    tokenId: 'rt-1',
    passwordHash: ARGON2,
    resetAt: T,
    credentialsVersion: 1,
  },
  'PasswordChanged.v1': { accountId: 'a-1', passwordHash: ARGON2, changedAt: T, credentialsVersion: 2 },
  'PasswordRehashed.v1': { accountId: 'a-1', passwordHash: ARGON2, rehashedAt: T },
  'ResetTokensInvalidated.v1': { accountId: 'a-1', changeId: 'e-1', tokenIds: ['rt-2'] },
  'AccessTokensRevoked.v1': { accountId: 'a-1', changeId: 'e-1', revokedBefore: T },
  'PasswordChangeNoticeSent.v1': { accountId: 'a-1', changeId: 'e-1', sentAt: T },
  'SessionStarted.v1': {
    accountId: 'a-1',
    sessionId: 's-1',
    startedWith: 'basic',
    credentialsVersion: 2,
    startedAt: T,
    expiresAt: T,
  },
  'SessionTokenIssued.v1': {
    accountId: 'a-1',
    sessionId: 's-1',
    tokenId: 't-2',
    issuedWith: 't-1',
    credentialsVersion: 2,
    issuedAt: T,
    expiresAt: T,
  },
  'SessionEnded.v1': { accountId: 'a-1', sessionId: 's-1', endedWith: 't-2', endedAt: T, expiresAt: T },
  'LoginFailed.v1': SECURITY,
  'AccessTokenRejected.v1': { ...SECURITY, reason: 'expired', tokenId: 't-3' },
  'OldPasswordRejected.v1': SECURITY,
  'AccessForbidden.v1': SECURITY,
  'RateLimited.v1': SECURITY,
  'ResetTokenRejected.v1': SECURITY,
  'AuditRead.v1': SECURITY,
};

/** Names that hold credentials or their hashes; `…Id` names (tokenId) are identifiers, not secrets. */
const SECRET_NAME = /(hash|password|secret|token|key)$/i;
/** Values that look like a hash whatever the field is called. */
const SECRET_VALUE = /^\$argon2|^[0-9a-f]{64}$/;

/**
 * Fields reviewed as not secret although their name says hash. A security event's e-mail hash is
 * keyed with the server secret, so it tells an auditor which events share an address without a
 * way to test guesses.
 */
const REVIEWED_NOT_SECRET: Partial<Record<ChronicleEventType, readonly string[]>> = {
  'LoginFailed.v1': ['emailHash'],
  'AccessTokenRejected.v1': ['emailHash'],
  'OldPasswordRejected.v1': ['emailHash'],
  'AccessForbidden.v1': ['emailHash'],
  'RateLimited.v1': ['emailHash'],
  'ResetTokenRejected.v1': ['emailHash'],
  'AuditRead.v1': ['emailHash'],
  // Chain hashes of the history's heads: public, what an auditor checks a seal against.
  'HistoryProtected.v1': ['oldHead.hash', 'newHead.hash', 'signature'],
};

const types = Object.keys(EVENT_SCHEMAS) as ChronicleEventType[];

/** Every field path in `data`, nested objects included, with its value. */
function fields(data: unknown, prefix = ''): Array<[string, unknown]> {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return [];
  return Object.entries(data).flatMap(([name, value]) => [
    [`${prefix}${name}`, value] as [string, unknown],
    ...fields(value, `${prefix}${name}.`),
  ]);
}

function recorded(type: string, data: Record<string, unknown>): RecordedEvent {
  return {
    id: 'e-1',
    type,
    data,
    metadata: { actor: 'a-9', correlationId: 'req-1', causationId: null, occurredAt: T },
    stream: 'account-a-1',
    revision: 3,
    position: position(17),
    recordedAt: T,
    hash: 'a'.repeat(64),
  };
}

describe('secret fields of every event type', () => {
  it('have a sample for each type in EVENT_SCHEMAS, and no other', () => {
    expect(Object.keys(SAMPLES).sort()).toEqual([...types].sort());
  });

  it.each(types)('%s declares every field that looks secret', (type) => {
    const declared = new Set([...EVENT_SCHEMAS[type].secretFields, ...(REVIEWED_NOT_SECRET[type] ?? [])]);
    const undeclared = fields(SAMPLES[type])
      .filter(([name, value]) => {
        const leaf = name.split('.').at(-1)!;
        return SECRET_NAME.test(leaf) || (typeof value === 'string' && SECRET_VALUE.test(value));
      })
      .map(([name]) => name)
      .filter((name) => !declared.has(name));
    expect(undeclared).toEqual([]);
  });

  it.each(types)('%s declares only fields it has', (type) => {
    const names = fields(SAMPLES[type]).map(([name]) => name);
    // Most types declare no secret: one assertion over the whole list, so none of them passes empty.
    expect(EVENT_SCHEMAS[type].secretFields.filter((field) => !names.includes(field))).toEqual([]);
  });

  it.each(types)('%s is audited with every declared secret redacted and nothing else changed', (type) => {
    const data = SAMPLES[type] as Record<string, unknown>;
    const record = toAuditRecord(recorded(type, data));
    const secrets = EVENT_SCHEMAS[type].secretFields;
    for (const [name, value] of Object.entries(data)) {
      expect(record.data[name]).toEqual(secrets.includes(name) ? REDACTED : value);
    }
    for (const field of secrets) expect(JSON.stringify(record)).not.toContain(String(data[field]));
  });
});

describe('toAuditRecord', () => {
  it("shows the provenance of a write: the client's request id and how its caller authenticated", () => {
    const event = recorded('EmailReserved.v1', { accountId: 'a-1' });
    event.metadata = {
      ...event.metadata,
      clientRequestId: 'client-7',
      auth: { method: 'bearer', tokenId: 't-3' },
    };
    expect(toAuditRecord(event)).toMatchObject({
      correlationId: 'req-1',
      clientRequestId: 'client-7',
      auth: { method: 'bearer', tokenId: 't-3' },
    });
  });

  it('shows id, position, stream, revision, type, metadata, recorded time and hash', () => {
    expect(toAuditRecord(recorded('EmailReserved.v1', { accountId: 'a-1' }))).toEqual({
      id: 'e-1',
      position: '17',
      stream: 'account-a-1',
      revision: 3,
      type: 'EmailReserved.v1',
      occurredAt: T,
      recordedAt: T,
      actor: 'a-9',
      correlationId: 'req-1',
      causationId: null,
      clientRequestId: null,
      auth: null,
      data: { accountId: 'a-1' },
      hash: 'a'.repeat(64),
    });
  });

  it("shows the event's cause, and that its subject was erased", () => {
    const event = recorded('EmailReserved.v1', { accountId: 'a-1' });
    event.metadata = { ...event.metadata, causationId: 'e-0' };
    expect(toAuditRecord(event)).toMatchObject({ causationId: 'e-0' });
    expect(toAuditRecord(event)).not.toHaveProperty('erased');
    expect(toAuditRecord({ ...event, erased: true })).toMatchObject({ erased: true });
  });

  it('does not change the stored event', () => {
    const data = { ...SAMPLES['AccountOpened.v1'] };
    toAuditRecord(recorded('AccountOpened.v1', data));
    expect(data.passwordHash).toBe(ARGON2);
  });

  it('redacts every field of a type without a schema: what it holds is unknown', () => {
    expect(redactEventData('Unknown.v1', { a: 1, token: 'x' })).toEqual({ a: REDACTED, token: REDACTED });
  });
});
