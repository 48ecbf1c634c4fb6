import { randomUUID } from 'node:crypto';
import { passwordResetStreamName } from '@chronicle/domain';
import { RecordedEvent } from '@chronicle/event-store';
import { passwordResetEmail } from '@chronicle/mail';
import { RecordingMailer } from '../shared/test-doubles.spec-helper';
import { ACCOUNTS_NOW, AccountsWorld, accountsWorld } from './accounts-world.spec-helper';
import { PasswordLinkMailer, PasswordLinkRequest } from './password-link-mailer';

describe('PasswordLinkMailer', () => {
  let world: AccountsWorld;
  let mailer: RecordingMailer;
  let links: PasswordLinkMailer;

  beforeEach(() => {
    world = accountsWorld();
    mailer = new RecordingMailer();
    links = new PasswordLinkMailer(world.repository, mailer, world.clock, world.config);
  });
  afterEach(() => world.close());

  /** A request for a link for `accountId`, made now, working for 30 minutes. */
  const request = (accountId = 'a-1'): PasswordLinkRequest => ({
    event: {
      id: randomUUID(),
      metadata: { correlationId: 'c-1', actor: 'anonymous' },
    } as unknown as RecordedEvent,
    account: { id: accountId, email: `${accountId}@example.com` },
    credentialsVersion: 0,
    requestedAt: new Date(ACCOUNTS_NOW).toISOString(),
    ttlSeconds: 1800,
    kind: 'password-reset',
    content: passwordResetEmail,
  });

  it('mails the link to the account, under a Message-ID of the kind and the request', async () => {
    const asked = request();
    await links.send(asked);
    expect(mailer.sent).toEqual([
      expect.objectContaining({ id: `password-reset-${asked.event.id}`, to: 'a-1@example.com' }),
    ]);
    expect(mailer.sent[0].text).toContain('https://accounts.example.test/reset-password?token=');
    const recorded = await world.store.readStream(passwordResetStreamName(asked.event.id));
    expect(recorded.map((event) => event.type)).toEqual(['ResetTokenIssued.v1', 'PasswordResetEmailSent.v1']);
  });

  it('sends nothing on a retry for another account than the one the token was issued for', async () => {
    const asked = request();
    mailer.failNext = 1;
    await expect(links.send(asked)).rejects.toThrow('connection reset');
    await links.send({ ...asked, account: { id: 'a-2', email: 'a-2@example.com' } });
    expect(mailer.sent).toEqual([]);
  });

  it('sends a token that failed to go out until the instant it expires, and not from then on', async () => {
    const asked = request();
    mailer.failNext = 1;
    await expect(links.send(asked)).rejects.toThrow('connection reset');
    world.clock.time = ACCOUNTS_NOW + 1800_000;
    await links.send(asked);
    expect(mailer.sent).toEqual([]);
    world.clock.time = ACCOUNTS_NOW + 1800_000 - 1;
    await links.send(asked);
    expect(mailer.sent).toHaveLength(1);
  });

  it('sends nothing when there is no account', async () => {
    await links.send({ ...request(), account: null });
    expect(mailer.sent).toEqual([]);
  });
});
