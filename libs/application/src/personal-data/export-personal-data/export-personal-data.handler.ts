import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import {
  accountStreamName,
  customerStreamName,
  NotFoundError,
  passwordChangeStreamName,
  PasswordChangeNoticeSent,
  PasswordResetEmailSent,
  SessionEnded,
  SessionStarted,
  sessionStreamName,
  throwIfErased,
  UserRegistered,
  userStreamName,
} from '@chronicle/domain';
import {
  comparePositions,
  EventStore,
  formatPosition,
  parsePosition,
  Position,
  RecordedEvent,
} from '@chronicle/event-store';
import { toAuditRecord } from '../../audit/audit-record';
import { Clock } from '../../shared/clock';
import { checkUserAccess } from '../../users/get-user/get-user.handler';
import {
  CustomerExport,
  EXPORT_SESSION_LIMIT,
  EXPORT_SESSION_RECORD_LIMIT,
  ExportedSession,
  ExportPersonalDataQuery,
  PersonalDataExport,
  PersonalValueChange,
  PersonalValueHistory,
  SentEmail,
  UserExport,
} from './export-personal-data.query';

/** Streams read at once for the sessions and e-mails: a person's many sessions never flood the store. */
const READS_AT_ONCE = 16;

/** The page of the actor's session starts read at a time. */
const SESSION_PAGE = 1000;

const changesOf = (event: RecordedEvent): Record<string, unknown> =>
  (event.data.changes ?? {}) as Record<string, unknown>;

/**
 * Each field's values, oldest first: as the `registered` event set them, then as each `changed`
 * event's `changes` did (only the fields whose value really changed are there).
 */
function valueHistory<F extends string>(
  events: readonly RecordedEvent[],
  fields: readonly F[],
  registered: string,
  changed: string | null,
): PersonalValueHistory<F> {
  const history = Object.fromEntries(
    fields.map((field) => [field, []]),
  ) as unknown as PersonalValueHistory<F>;
  for (const event of events) {
    const values = event.type === registered ? event.data : event.type === changed ? changesOf(event) : null;
    if (values === null) continue;
    for (const field of fields) {
      if (!Object.prototype.hasOwnProperty.call(values, field)) continue;
      history[field].push(changeOf(event, values[field]));
    }
  }
  return history;
}

const changeOf = (event: RecordedEvent, value: unknown): PersonalValueChange => ({
  value,
  occurredAt: event.metadata.occurredAt,
  recordedAt: event.recordedAt,
  actor: event.metadata.actor,
  position: formatPosition(event.position),
});

const byPosition = (a: RecordedEvent, b: RecordedEvent): number => comparePositions(a.position, b.position);

/** `work` over `items`, a few at a time, results in order. */
async function inBatches<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += READS_AT_ONCE) {
    results.push(...(await Promise.all(items.slice(i, i + READS_AT_ONCE).map(work))));
  }
  return results;
}

/**
 * A subject's personal data built from the history alone (every read through the EventStore port,
 * so values come as the store's read path gives them), never from a read model:
 * - a user: name and age from `user-<id>`, the e-mail address from its `account-<id>`; the
 *   account's sessions (`session-<id>` streams, found by their starts, whose actor is the account);
 *   the e-mails sent: invitation and reset links (`passwordreset-<id>`, found by their
 *   PasswordResetEmailSent for the account) and password-change notices (`passwordchange-<id>`,
 *   named by the account's changes);
 * - a customer: name and e-mail address from `customer-<id>`;
 * and the audit records of all those streams.
 */
@QueryHandler(ExportPersonalDataQuery)
export class ExportPersonalDataHandler implements IQueryHandler<ExportPersonalDataQuery, PersonalDataExport> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ subject, principal }: ExportPersonalDataQuery): Promise<PersonalDataExport> {
    if (subject.kind === 'customer') return this.customer(subject.id);
    // As GET /users/{id}: checked before anything is read, so a refusal tells nothing.
    if (principal !== null) checkUserAccess(principal, subject.id, undefined);
    return this.user(subject.id);
  }

  private async customer(customerId: number): Promise<CustomerExport> {
    const exportedAt = this.clock.now().toISOString();
    const events = await this.store.readStream(customerStreamName(customerId));
    throwIfErased(events, 'Customer');
    if (!events.some((event) => event.type === 'CustomerRegistered.v1')) throw new NotFoundError('Customer');
    return {
      subject: { kind: 'customer', id: customerId },
      exportedAt,
      personalData: valueHistory(events, ['name', 'email'], 'CustomerRegistered.v1', 'CustomerChanged.v1'),
      audit: events.map(toAuditRecord),
    };
  }

  private async user(userId: string): Promise<UserExport> {
    const exportedAt = this.clock.now().toISOString();
    const userEvents = await this.store.readStream(userStreamName(userId));
    throwIfErased(userEvents, 'User');
    const registered = userEvents.find((event) => event.type === 'UserRegistered.v2') as
      RecordedEvent<UserRegistered['data']> | undefined;
    if (registered === undefined) throw new NotFoundError('User');
    const { name, age } = valueHistory(userEvents, ['name', 'age'], 'UserRegistered.v2', 'UserPatched.v1');
    const accountId = registered.data.accountId;
    const account = accountId === null ? null : await this.account(accountId);
    return {
      subject: { kind: 'user', id: userId },
      exportedAt,
      accountId,
      personalData: { name, age, email: account?.email ?? [] },
      sessions: account?.sessions ?? [],
      emails: account?.emails ?? [],
      audit: [...userEvents, ...(account?.events ?? [])].sort(byPosition).map(toAuditRecord),
      omitted: { sessions: account?.omittedSessions ?? 0 },
    };
  }

  /** The account's address, sessions and e-mails, with every event of its streams. */
  private async account(accountId: string) {
    const accountEvents = await this.store.readStream(accountStreamName(accountId));
    const { email } = valueHistory(accountEvents, ['email'], 'AccountOpened.v1', null);
    const { sessions, omitted, events: sessionEvents } = await this.sessions(accountId);
    const mail = await this.emails(accountId, accountEvents, email);
    return {
      email,
      sessions,
      omittedSessions: omitted,
      emails: mail.emails,
      events: [...accountEvents, ...sessionEvents, ...mail.events],
    };
  }

  /**
   * The account's newest sessions, each from its own stream: as many as fit in
   * EXPORT_SESSION_LIMIT sessions and EXPORT_SESSION_RECORD_LIMIT records, so that the document
   * stays bounded however often the person logs in or mints tokens. Sessions are linked to their
   * account only by the events' data: their starts are found by actor (the account starts its own
   * sessions: an indexed query on the embedded store) and checked against the data; only the
   * newest ids are kept while reading.
   */
  private async sessions(
    accountId: string,
  ): Promise<{ sessions: ExportedSession[]; omitted: number; events: RecordedEvent[] }> {
    let newest: string[] = [];
    let found = 0;
    let after: Position | undefined;
    do {
      const page = await this.store.queryLog({
        actor: accountId,
        eventTypes: ['SessionStarted.v1'],
        after,
        limit: SESSION_PAGE,
      });
      for (const event of page.events as Array<RecordedEvent<SessionStarted['data']>>) {
        if (event.data.accountId !== accountId) continue;
        found += 1;
        newest.push(event.data.sessionId);
        // Trimmed in bulk: amortised O(1) per session, at most twice the limit held.
        if (newest.length >= 2 * EXPORT_SESSION_LIMIT) newest = newest.slice(-EXPORT_SESSION_LIMIT);
      }
      after = page.next ?? undefined;
    } while (after !== undefined);
    // Newest first, until a limit is reached: the sessions left out are always the oldest.
    const kept: RecordedEvent[][] = [];
    let records = 0;
    const candidates = newest.slice(-EXPORT_SESSION_LIMIT).reverse();
    reading: for (let i = 0; i < candidates.length; i += READS_AT_ONCE) {
      const batch = await Promise.all(
        candidates.slice(i, i + READS_AT_ONCE).map((id) => this.store.readStream(sessionStreamName(id))),
      );
      for (const events of batch) {
        if (records + events.length > EXPORT_SESSION_RECORD_LIMIT) break reading;
        records += events.length;
        kept.push(events);
      }
    }
    kept.reverse();
    const sessions = kept.flatMap((events) => {
      const session = sessionOf(events);
      return session === null ? [] : [session];
    });
    return { sessions, omitted: found - kept.length, events: kept.flat() };
  }

  /**
   * Invitation and reset links (each request's `passwordreset-<id>` stream records its e-mail;
   * an invitation's request is the account's AccountInvited event), and the notices of the
   * account's password changes (`passwordchange-<change id>`), oldest first.
   */
  private async emails(
    accountId: string,
    accountEvents: readonly RecordedEvent[],
    email: PersonalValueChange[],
  ): Promise<{ emails: SentEmail[]; events: RecordedEvent[] }> {
    const invitations = new Set(
      accountEvents.filter((event) => event.type === 'AccountInvited.v1').map((event) => event.id),
    );
    const sent: RecordedEvent[] = [];
    for await (const event of this.store.readAll({ eventTypes: ['PasswordResetEmailSent.v1'] })) {
      if ((event.data as PasswordResetEmailSent['data']).accountId === accountId) sent.push(event);
    }
    const changes = accountEvents.filter(
      (event) => event.type === 'PasswordReset.v1' || event.type === 'PasswordChanged.v1',
    );
    const streams = [
      ...new Set([
        ...sent.map((event) => event.stream),
        ...changes.map((event) => passwordChangeStreamName(event.id)),
      ]),
    ].filter((stream) => stream !== accountStreamName(accountId));
    const events = (await inBatches(streams, (stream) => this.store.readStream(stream))).flat();
    const notices = events.filter((event) => event.type === 'PasswordChangeNoticeSent.v1');
    const emails = [...sent, ...notices].sort(byPosition).map((event): SentEmail => {
      const data = event.data as PasswordResetEmailSent['data'] | PasswordChangeNoticeSent['data'];
      const kind =
        event.type === 'PasswordChangeNoticeSent.v1'
          ? 'password-change'
          : invitations.has((data as PasswordResetEmailSent['data']).requestId)
            ? 'invitation'
            : 'password-reset';
      return { kind, to: addressAt(email, event), sentAt: data.sentAt, recordedAt: event.recordedAt };
    });
    return { emails, events };
  }
}

/** The address the account had when `event` was written: its last value set before. */
function addressAt(email: readonly PersonalValueChange[], event: RecordedEvent): unknown {
  const before = email.filter(
    (change) => comparePositions(parsePosition(change.position)!, event.position) < 0,
  );
  return before.at(-1)?.value ?? null;
}

/** A session as its stream tells it; null for a stream without its start. */
function sessionOf(events: readonly RecordedEvent[]): ExportedSession | null {
  const started = events.find((event) => event.type === 'SessionStarted.v1') as
    RecordedEvent<SessionStarted['data']> | undefined;
  if (started === undefined) return null;
  const ended = events.find((event) => event.type === 'SessionEnded.v1') as
    RecordedEvent<SessionEnded['data']> | undefined;
  return {
    id: started.data.sessionId,
    method: started.data.startedWith,
    startedAt: started.data.startedAt,
    expiresAt: started.data.expiresAt,
    endedAt: ended?.data.endedAt ?? null,
    tokens: events.filter((event) => event.type === 'SessionTokenIssued.v1').length,
  };
}
