import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  accountStreamName,
  customerStreamName,
  DomainEvent,
  ErasedError,
  NotFoundError,
  passwordChangeStreamName,
  passwordResetStreamName,
  sessionStreamName,
  userStreamName,
} from '@chronicle/domain';
import { formatPosition, RecordedEvent, SqliteEventStore } from '@chronicle/event-store';
import { REDACTED } from '../../audit/audit-record';
import { ForbiddenError } from '../../shared/application-errors';
import { CommandContext, followUpContext } from '../../shared/command-context';
import { toNewEvent } from '../../shared/event-sourced-repository';
import { Principal } from '../../shared/principal';
import { FixedClock } from '../../shared/test-doubles.spec-helper';
import { ExportPersonalDataHandler } from './export-personal-data.handler';
import {
  CustomerExport,
  EXPORT_SESSION_LIMIT,
  EXPORT_SESSION_RECORD_LIMIT,
  exportFileName,
  ExportPersonalDataQuery,
  UserExport,
} from './export-personal-data.query';

const T0 = Date.parse('2026-11-24T09:00:00.000Z');
const ARGON2 = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNo';

const contextOf = (actor: string): CommandContext => ({
  actor,
  correlationId: `c-${actor}`,
  auth: { method: 'basic', tokenId: null },
});
const ADMIN = contextOf('a-admin');
const ADA = contextOf('a-ada');

const principal = (accountId: string, userId: string, roles: Principal['roles'] = ['user']): Principal => ({
  accountId,
  userId,
  roles,
  method: 'basic',
  credentialsVersion: 0,
});

describe('ExportPersonalDataHandler', () => {
  let dir: string;
  let store: SqliteEventStore;
  let clock: FixedClock;
  let handler: ExportPersonalDataHandler;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'export-'));
    store = SqliteEventStore.open(dir);
    clock = new FixedClock(T0);
    handler = new ExportPersonalDataHandler(store, clock);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Appends `event` to `stream` as `context` would, a second after the last; returns it as stored. */
  const append = async (
    stream: string,
    event: DomainEvent,
    context: CommandContext,
  ): Promise<RecordedEvent> => {
    clock.time += 1000;
    await store.append(stream, [toNewEvent(event, context, clock.now())], 'any');
    return (await store.readStream(stream)).at(-1)!;
  };
  const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

  /** An invited account with its user, opened by the admin. */
  const openAda = async (accountId = 'a-ada', userId = 'u-ada', email = 'ada@example.com') => {
    const registered = await append(
      userStreamName(userId),
      {
        type: 'UserRegistered.v2',
        data: { userId, accountId, name: 'Ada', age: 36, createdon: at(1) },
      },
      ADMIN,
    );
    const opened = await append(
      accountStreamName(accountId),
      {
        type: 'AccountOpened.v1',
        data: { accountId, email, userId, roles: ['user'], passwordHash: ARGON2, openedAt: at(2) },
      },
      ADMIN,
    );
    const invited = await append(
      accountStreamName(accountId),
      { type: 'AccountInvited.v1', data: { accountId, invitedAt: at(3), expiresAt: at(99) } },
      ADMIN,
    );
    return { registered, opened, invited };
  };

  /** The e-mail of a password link: its token and its sending, in the request's own stream. */
  const mailLink = async (cause: RecordedEvent, accountId: string) => {
    const stream = passwordResetStreamName(cause.id);
    const context = followUpContext(cause);
    await append(
      stream,
      {
        type: 'ResetTokenIssued.v1',
        data: {
          accountId,
          requestId: cause.id,
          tokenId: `t-${cause.id}`,
          tokenHash: 'b'.repeat(64),
          issuedAt: clock.now().toISOString(),
          expiresAt: at(999),
          credentialsVersion: 0,
        },
      },
      context,
    );
    return append(
      stream,
      {
        type: 'PasswordResetEmailSent.v1',
        data: { accountId, requestId: cause.id, tokenId: `t-${cause.id}`, sentAt: clock.now().toISOString() },
      },
      context,
    );
  };

  const startSession = async (accountId: string, sessionId: string, tokens = 1) => {
    const context = contextOf(accountId);
    const started = await append(
      sessionStreamName(sessionId),
      {
        type: 'SessionStarted.v1',
        data: {
          accountId,
          sessionId,
          startedWith: 'basic',
          credentialsVersion: 0,
          startedAt: clock.now().toISOString(),
          expiresAt: at(3600),
        },
      },
      context,
    );
    for (let token = 0; token < tokens; token++) {
      await append(
        sessionStreamName(sessionId),
        {
          type: 'SessionTokenIssued.v1',
          data: {
            accountId,
            sessionId,
            tokenId: `${sessionId}-${token}`,
            issuedWith: token === 0 ? null : `${sessionId}-${token - 1}`,
            credentialsVersion: 0,
            issuedAt: clock.now().toISOString(),
            expiresAt: at(3600),
          },
        },
        context,
      );
    }
    return started;
  };

  const exportUser = (userId: string, caller: Principal | null = null) =>
    handler.execute(new ExportPersonalDataQuery({ kind: 'user', id: userId }, caller)) as Promise<UserExport>;

  /** `count` sessions of a-ada's, `s-0` oldest, each only started, in a stream of its own. */
  const startSessions = async (count: number) => {
    for (let index = 0; index < count; index += 1) {
      const event = toNewEvent(
        {
          type: 'SessionStarted.v1',
          data: {
            accountId: 'a-ada',
            sessionId: `s-${index}`,
            startedWith: 'basic',
            credentialsVersion: 0,
            startedAt: at(index),
            expiresAt: at(index + 3600),
          },
        },
        ADA,
        new Date(T0),
      );
      await store.append(sessionStreamName(`s-${index}`), [event], 'no_stream');
    }
  };

  /** A session of a-ada's in its stream, as one append: its start, then `tokens` tokens. */
  const appendSession = (sessionId: string, tokens: number) =>
    store.append(
      sessionStreamName(sessionId),
      [
        toNewEvent(
          {
            type: 'SessionStarted.v1',
            data: {
              accountId: 'a-ada',
              sessionId,
              startedWith: 'basic',
              credentialsVersion: 0,
              startedAt: at(0),
              expiresAt: at(3600),
            },
          },
          ADA,
          new Date(T0),
        ),
        ...Array.from({ length: tokens }, (_, token) =>
          toNewEvent(
            {
              type: 'SessionTokenIssued.v1',
              data: {
                accountId: 'a-ada',
                sessionId,
                tokenId: `${sessionId}-${token}`,
                issuedWith: null,
                credentialsVersion: 0,
                issuedAt: at(0),
                expiresAt: at(3600),
              },
            },
            ADA,
            new Date(T0),
          ),
        ),
      ],
      'no_stream',
    );

  it("exports a person's values with their history, sessions, e-mails and the audit of their streams", async () => {
    const { registered, opened, invited } = await openAda();
    const invitationSent = await mailLink(invited, 'a-ada');
    const passwordSet = await append(
      accountStreamName('a-ada'),
      {
        type: 'PasswordReset.v1',
        data: {
          accountId: 'a-ada',
          tokenId: `t-${invited.id}`,
          passwordHash: ARGON2,
          resetAt: at(7),
          credentialsVersion: 1,
        },
      },
      contextOf('anonymous'),
    );
    const notice = await append(
      passwordChangeStreamName(passwordSet.id),
      {
        type: 'PasswordChangeNoticeSent.v1',
        data: { accountId: 'a-ada', changeId: passwordSet.id, sentAt: at(8) },
      },
      followUpContext(passwordSet),
    );
    const renamed = await append(
      userStreamName('u-ada'),
      { type: 'UserPatched.v1', data: { userId: 'u-ada', changes: { name: 'Ada L.' }, modifiedon: at(9) } },
      ADA,
    );
    const aged = await append(
      userStreamName('u-ada'),
      { type: 'UserPatched.v1', data: { userId: 'u-ada', changes: { age: 37 }, modifiedon: at(10) } },
      ADMIN,
    );
    const first = await startSession('a-ada', 's-1', 2);
    const ended = await append(
      sessionStreamName('s-1'),
      {
        type: 'SessionEnded.v1',
        data: {
          accountId: 'a-ada',
          sessionId: 's-1',
          endedWith: 's-1-1',
          endedAt: at(14),
          expiresAt: at(3600),
        },
      },
      ADA,
    );
    // A reset request's link: its stream is named by the request, found by its e-mail's account.
    const request = await append(
      'resetrequest-somekey',
      { type: 'PasswordResetRequested.v2', data: { reservation: 'email-somekey', requestedAt: at(15) } },
      contextOf('anonymous'),
    );
    const resetSent = await mailLink(request, 'a-ada');
    const second = await startSession('a-ada', 's-2');
    // Someone else's: none of it is Ada's.
    const grace = await openAda('a-grace', 'u-grace', 'grace@example.com');
    await mailLink(grace.invited, 'a-grace');
    await startSession('a-grace', 's-3');
    clock.time += 1000;

    const exported = await exportUser('u-ada');

    const change = (event: RecordedEvent, value: unknown) => ({
      value,
      occurredAt: event.metadata.occurredAt,
      recordedAt: event.recordedAt,
      actor: event.metadata.actor,
      position: formatPosition(event.position),
    });
    expect(exported).toMatchObject({
      subject: { kind: 'user', id: 'u-ada' },
      exportedAt: clock.now().toISOString(),
      accountId: 'a-ada',
      personalData: {
        name: [change(registered, 'Ada'), change(renamed, 'Ada L.')],
        age: [change(registered, 36), change(aged, 37)],
        email: [change(opened, 'ada@example.com')],
      },
      sessions: [
        {
          id: 's-1',
          method: 'basic',
          startedAt: first.data.startedAt,
          expiresAt: at(3600),
          endedAt: at(14),
          tokens: 2,
        },
        {
          id: 's-2',
          method: 'basic',
          startedAt: second.data.startedAt,
          expiresAt: at(3600),
          endedAt: null,
          tokens: 1,
        },
      ],
      emails: [
        {
          kind: 'invitation',
          to: 'ada@example.com',
          sentAt: invitationSent.data.sentAt,
          recordedAt: invitationSent.recordedAt,
        },
        { kind: 'password-change', to: 'ada@example.com', sentAt: at(8), recordedAt: notice.recordedAt },
        {
          kind: 'password-reset',
          to: 'ada@example.com',
          sentAt: resetSent.data.sentAt,
          recordedAt: resetSent.recordedAt,
        },
      ],
      omitted: { sessions: 0 },
    });
    expect(exported.sessions[0].endedAt).toBe(ended.data.endedAt);
    // The audit of every stream of hers, oldest first, and nothing of anyone else's.
    const streams = exported.audit.map((record) => record.stream);
    expect([...new Set(streams)].sort()).toEqual(
      [
        'account-a-ada',
        'user-u-ada',
        passwordResetStreamName(invited.id),
        passwordResetStreamName(request.id),
        passwordChangeStreamName(passwordSet.id),
        'session-s-1',
        'session-s-2',
      ].sort(),
    );
    expect(exported.audit).toHaveLength(17);
    const positions = exported.audit.map((record) => BigInt(record.position));
    expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(JSON.stringify(exported)).not.toContain('grace');
  });

  it('shows audit records as the audit does: the same record, secrets redacted', async () => {
    const { opened } = await openAda();
    const exported = await exportUser('u-ada');
    const record = exported.audit.find((candidate) => candidate.id === opened.id)!;
    expect(record).toMatchObject({
      stream: 'account-a-ada',
      type: 'AccountOpened.v1',
      actor: 'a-admin',
      hash: opened.hash,
      data: { email: 'ada@example.com', passwordHash: REDACTED },
    });
    expect(JSON.stringify(exported)).not.toContain(ARGON2);
  });

  it(`lists the newest ${EXPORT_SESSION_LIMIT} sessions and counts the older ones`, async () => {
    await openAda();
    await startSessions(EXPORT_SESSION_LIMIT + 2);
    const exported = await exportUser('u-ada');
    expect(exported.omitted).toEqual({ sessions: 2 });
    expect(exported.sessions).toHaveLength(EXPORT_SESSION_LIMIT);
    expect(exported.sessions[0].id).toBe('s-2');
    expect(exported.sessions.at(-1)!.id).toBe(`s-${EXPORT_SESSION_LIMIT + 1}`);
    expect(exported.audit.filter((record) => record.stream.startsWith('session-'))).toHaveLength(
      EXPORT_SESSION_LIMIT,
    );
  });

  it(`keeps the sessions' records within ${EXPORT_SESSION_RECORD_LIMIT}, leaving out the oldest sessions`, async () => {
    await openAda();
    // Oldest to newest: 2 records, 19,999 records (a token minted again and again), 2 records.
    await appendSession('s-old', 1);
    await appendSession('s-busy', EXPORT_SESSION_RECORD_LIMIT - 2);
    await appendSession('s-new', 1);
    const exported = await exportUser('u-ada');
    expect(exported.sessions.map((listed) => listed.id)).toEqual(['s-new']);
    expect(exported.omitted).toEqual({ sessions: 2 });
    expect(exported.audit.filter((record) => record.stream.startsWith('session-'))).toHaveLength(2);
  });

  it('exports a user without an account: no address, sessions or e-mails', async () => {
    await append(
      userStreamName('u-1'),
      {
        type: 'UserRegistered.v2',
        data: { userId: 'u-1', accountId: null, name: 'Bob', age: 50, createdon: at(1) },
      },
      contextOf('cli:root'),
    );
    const exported = await exportUser('u-1');
    expect(exported).toMatchObject({
      accountId: null,
      personalData: { name: [{ value: 'Bob', actor: 'cli:root' }], age: [{ value: 50 }], email: [] },
      sessions: [],
      emails: [],
      omitted: { sessions: 0 },
    });
    expect(exported.audit).toHaveLength(1);
  });

  it('lets a person export their own user, and an admin anyone', async () => {
    await openAda();
    await expect(exportUser('u-ada', principal('a-ada', 'u-ada'))).resolves.toMatchObject({
      accountId: 'a-ada',
    });
    await expect(exportUser('u-ada', principal('a-admin', 'u-admin', ['admin']))).resolves.toMatchObject({
      accountId: 'a-ada',
    });
  });

  it('refuses another user to a non-admin, known or not, as GET /users/{id} does', async () => {
    await openAda();
    await expect(exportUser('u-ada', principal('a-bob', 'u-bob'))).rejects.toThrow(ForbiddenError);
    await expect(exportUser('u-nobody', principal('a-bob', 'u-bob'))).rejects.toThrow(ForbiddenError);
    // An auditor reads users only as they were: no export, even of its own.
    await expect(exportUser('u-ada', principal('a-ada', 'u-ada', ['auditor']))).rejects.toThrow(
      ForbiddenError,
    );
  });

  it('answers an unknown user or customer with not found', async () => {
    await expect(exportUser('u-nobody', principal('a-admin', 'u-admin', ['admin']))).rejects.toThrow(
      new NotFoundError('User'),
    );
    await expect(
      handler.execute(new ExportPersonalDataQuery({ kind: 'customer', id: 7 }, null)),
    ).rejects.toThrow(new NotFoundError('Customer'));
  });

  it("exports a customer's name and address with their history and the audit of its stream", async () => {
    const registered = await append(
      customerStreamName(42),
      {
        type: 'CustomerRegistered.v1',
        data: { customerId: 42, name: 'Acme', email: 'acme@example.com', createdon: at(1) },
      },
      ADMIN,
    );
    const changed = await append(
      customerStreamName(42),
      { type: 'CustomerChanged.v1', data: { customerId: 42, changes: { email: 'sales@acme.example' } } },
      contextOf('cli:root'),
    );
    await append(
      customerStreamName(43),
      {
        type: 'CustomerRegistered.v1',
        data: { customerId: 43, name: 'Other', email: 'o@example.com', createdon: at(3) },
      },
      ADMIN,
    );
    const exported = (await handler.execute(
      new ExportPersonalDataQuery({ kind: 'customer', id: 42 }, null),
    )) as CustomerExport;
    expect(exported).toEqual({
      subject: { kind: 'customer', id: 42 },
      exportedAt: clock.now().toISOString(),
      personalData: {
        name: [
          expect.objectContaining({ value: 'Acme', actor: 'a-admin', recordedAt: registered.recordedAt }),
        ],
        email: [
          expect.objectContaining({
            value: 'acme@example.com',
            position: formatPosition(registered.position),
          }),
          expect.objectContaining({ value: 'sales@acme.example', actor: 'cli:root', occurredAt: at(2) }),
        ],
      },
      audit: [
        expect.objectContaining({ id: registered.id, stream: 'customer-42' }),
        expect.objectContaining({
          id: changed.id,
          data: { customerId: 42, changes: { email: 'sales@acme.example' } },
        }),
      ],
    });
  });

  describe('each rule on its own', () => {
    const exportCustomer = (customerId: number) =>
      handler.execute(
        new ExportPersonalDataQuery({ kind: 'customer', id: customerId }, null),
      ) as Promise<CustomerExport>;
    const erase = (stream: string, kind: 'user' | 'customer') =>
      append(stream, { type: 'SubjectErased.v1', data: { subject: stream, kind, erasedAt: at(50) } }, ADMIN);
    const ids = (exported: UserExport) => exported.audit.map((record) => record.id);

    it('answers an erased user or customer as erased, naming which', async () => {
      await openAda();
      await erase(userStreamName('u-ada'), 'user');
      await expect(exportUser('u-ada')).rejects.toThrow(new ErasedError('User', at(50)));
      await append(
        customerStreamName(7),
        {
          type: 'CustomerRegistered.v1',
          data: { customerId: 7, name: 'Acme', email: 'a@example.com', createdon: at(1) },
        },
        ADMIN,
      );
      await erase(customerStreamName(7), 'customer');
      await expect(exportCustomer(7)).rejects.toThrow(new ErasedError('Customer', at(50)));
    });

    it('exports a customer from its registration alone, and knows none from a stream without one', async () => {
      await append(
        customerStreamName(8),
        {
          type: 'CustomerRegistered.v1',
          data: { customerId: 8, name: 'Solo', email: 's@example.com', createdon: at(1) },
        },
        ADMIN,
      );
      await expect(exportCustomer(8)).resolves.toMatchObject({ personalData: { name: [{ value: 'Solo' }] } });
      await append(
        customerStreamName(9),
        { type: 'CustomerChanged.v1', data: { customerId: 9, changes: { name: 'Stray' } } },
        ADMIN,
      );
      await expect(exportCustomer(9)).rejects.toThrow(new NotFoundError('Customer'));
    });

    it("leaves out a session the account started for another account, and counts a session's tokens alone", async () => {
      await openAda();
      // Started by a-ada's actor, but another account's session in its data.
      await append(
        sessionStreamName('s-other'),
        {
          type: 'SessionStarted.v1',
          data: {
            accountId: 'a-other',
            sessionId: 's-other',
            startedWith: 'basic',
            credentialsVersion: 0,
            startedAt: at(5),
            expiresAt: at(3600),
          },
        },
        ADA,
      );
      await startSession('a-ada', 's-mine', 2);
      await append(
        sessionStreamName('s-mine'),
        {
          type: 'SessionEnded.v1',
          data: { accountId: 'a-ada', sessionId: 's-mine', endedAt: at(60), reason: 'logout' },
        },
        ADA,
      );
      const exported = await exportUser('u-ada');
      expect(exported.sessions).toEqual([
        expect.objectContaining({ id: 's-mine', tokens: 2, endedAt: at(60) }),
      ]);
      expect(exported.omitted).toEqual({ sessions: 0 });
      expect(exported.audit.some((record) => record.stream === sessionStreamName('s-other'))).toBe(false);
    });

    it(`keeps the newest ${EXPORT_SESSION_LIMIT} of more than twice as many sessions`, async () => {
      await openAda();
      const count = 2 * EXPORT_SESSION_LIMIT + 3;
      await startSessions(count);
      const exported = await exportUser('u-ada');
      expect(exported.omitted).toEqual({ sessions: count - EXPORT_SESSION_LIMIT });
      expect(exported.sessions.map((session) => session.id)).toEqual(
        Array.from({ length: EXPORT_SESSION_LIMIT }, (_, i) => `s-${count - EXPORT_SESSION_LIMIT + i}`),
      );
    });

    it(`keeps sessions whose records come to exactly ${EXPORT_SESSION_RECORD_LIMIT}`, async () => {
      await openAda();
      await appendSession('s-old', 1);
      await appendSession('s-new', EXPORT_SESSION_RECORD_LIMIT - 3);
      const exported = await exportUser('u-ada');
      expect(exported.sessions.map((listed) => listed.id)).toEqual(['s-old', 's-new']);
      expect(exported.omitted).toEqual({ sessions: 0 });
    });

    it('reads many e-mails a few streams at a time, each stream once', async () => {
      const { invited } = await openAda();
      // Seventeen links: more than one batch of reads.
      const requests = [invited];
      for (let i = 0; i < 16; i += 1) {
        requests.push(
          await append(
            `passwordresetrequest-${i}`,
            { type: 'PasswordResetRequested.v1', data: { emailHash: `h-${i}`, requestedAt: at(10 + i) } },
            contextOf('anonymous'),
          ),
        );
      }
      for (const request of requests) await mailLink(request, 'a-ada');
      // The same link mailed again: its stream is still read once.
      await append(
        passwordResetStreamName(invited.id),
        {
          type: 'PasswordResetEmailSent.v1',
          data: { accountId: 'a-ada', requestId: invited.id, tokenId: `t-${invited.id}`, sentAt: at(90) },
        },
        followUpContext(invited),
      );
      const exported = await exportUser('u-ada');
      expect(exported.emails).toHaveLength(18);
      expect(exported.emails.filter((email) => email.kind === 'invitation')).toHaveLength(2);
      expect(new Set(ids(exported)).size).toBe(exported.audit.length);
      expect(exported.audit.filter((record) => record.stream.startsWith('passwordreset-'))).toHaveLength(35);
    });

    it("calls a link an invitation only when an invitation asked for it, and lists a changed password's notice", async () => {
      const { opened } = await openAda();
      // A link whose request is another of the account's events: a reset, not an invitation.
      await mailLink(opened, 'a-ada');
      const changed = await append(
        accountStreamName('a-ada'),
        {
          type: 'PasswordChanged.v1',
          data: { accountId: 'a-ada', passwordHash: ARGON2, changedAt: at(20), credentialsVersion: 1 },
        },
        ADA,
      );
      const notice = await append(
        passwordChangeStreamName(changed.id),
        {
          type: 'PasswordChangeNoticeSent.v1',
          data: { accountId: 'a-ada', changeId: changed.id, sentAt: at(21) },
        },
        followUpContext(changed),
      );
      const exported = await exportUser('u-ada');
      expect(exported.emails.map((email) => email.kind)).toEqual(['password-reset', 'password-change']);
      expect(exported.emails[1]).toMatchObject({
        to: 'ada@example.com',
        sentAt: at(21),
        recordedAt: notice.recordedAt,
      });
      expect(new Set(ids(exported)).size).toBe(exported.audit.length);
    });

    it('names the export file with only characters every client keeps', () => {
      expect(exportFileName({ kind: 'user', id: 'u-1.a_b' })).toBe('chronicle-user-u-1.a_b-export.json');
      expect(exportFileName({ kind: 'user', id: 'a/b c"é' })).toBe('chronicle-user-a_b_c__-export.json');
      expect(exportFileName({ kind: 'customer', id: 42 })).toBe('chronicle-customer-42-export.json');
    });
  });
});
