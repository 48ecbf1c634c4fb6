import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChronicleConfig } from '@chronicle/config';
import { accountDecider, accountStreamName, AccountInvited } from '@chronicle/domain';
import { RecordedEvent, SqliteEventStore } from '@chronicle/event-store';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { FixedClock, RecordingMailer } from '../../shared/test-doubles.spec-helper';
import { PasswordLinkMailer } from '../password-link-mailer';
import { SendInvitationEmailCommand } from './send-invitation-email.command';
import { SendInvitationEmailHandler } from './send-invitation-email.handler';

// The saga's step runs in the sagas' worker (or the projector): its rules are tested here, on the
// real embedded store; the e2e and fault suites take the whole path.
describe('SendInvitationEmailHandler', () => {
  const context = { actor: 'admin', correlationId: 'spec', auth: { method: 'none' as const, tokenId: null } };
  const email = 'grace@example.com';
  let dir: string;
  let store: SqliteEventStore;
  let clock: FixedClock;
  let mailer: RecordingMailer;
  let repository: EventSourcedRepository;
  let handler: SendInvitationEmailHandler;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'invitation-email-'));
    store = SqliteEventStore.open(dir);
    clock = new FixedClock(Date.parse('2026-11-24T09:00:00.000Z'));
    mailer = new RecordingMailer();
    repository = new EventSourcedRepository(store, clock);
    const config = {
      tokenSecret: Buffer.alloc(32, 7),
      publicBaseUrl: 'https://accounts.example.test',
    } as ChronicleConfig;
    handler = new SendInvitationEmailHandler(
      repository,
      new PasswordLinkMailer(repository, mailer, clock, config),
    );
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Opens an invited account as the handler of POST /api/v1/accounts does, and returns its invitation. */
  const invite = async (): Promise<RecordedEvent<AccountInvited['data']>> => {
    await repository.handle(
      accountDecider,
      accountStreamName('a-1'),
      (_state, now) => ({
        type: 'OpenAccount' as const,
        accountId: 'a-1',
        userId: 'u-1',
        email,
        roles: [],
        passwordHash: 'unusable',
        invitationTtlSeconds: 3600,
        now: now.toISOString(),
      }),
      context,
    );
    const events = await store.readStream(accountStreamName('a-1'));
    return events.find((event) => event.type === 'AccountInvited.v1') as RecordedEvent<
      AccountInvited['data']
    >;
  };
  const send = (invitation: RecordedEvent<AccountInvited['data']>) =>
    handler.execute(new SendInvitationEmailCommand(invitation));

  it('mails the account one invitation, once, under a Message-ID of its own', async () => {
    const invitation = await invite();
    await send(invitation);
    await send(invitation);
    expect(mailer.sent).toHaveLength(1);
    expect(mailer.sent[0]).toMatchObject({
      to: email,
      id: `invitation-${invitation.id}`,
      template: 'invitation',
    });
    expect(mailer.sent[0].text).toContain('https://accounts.example.test/reset-password?token=');
    expect(mailer.sent[0].text).toContain('expires at 2026-11-24 10:00 UTC');
  });

  it('sends nothing once a password has been set another way', async () => {
    const invitation = await invite();
    await repository.handle(
      accountDecider,
      accountStreamName('a-1'),
      (_state, now) => ({
        type: 'ChangePassword' as const,
        passwordHash: 'new',
        verifiedPasswordHash: 'unusable',
        now: now.toISOString(),
      }),
      context,
    );
    await send(invitation);
    expect(mailer.sent).toEqual([]);
  });

  it('sends nothing once the invitation has expired', async () => {
    const invitation = await invite();
    clock.time += 3600 * 1000;
    await send(invitation);
    expect(mailer.sent).toEqual([]);
  });
});
