import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChronicleConfig } from '@chronicle/config';
import {
  AccountOpened,
  accountStreamName,
  addressHasher,
  EVENT_UPCASTERS,
  PasswordResetRequested,
} from '@chronicle/domain';
import {
  RecordedEvent,
  SqliteEventStore,
  UpcasterRegistry,
  UpcastingEventStore,
} from '@chronicle/event-store';
import { MailMessage } from '@chronicle/mail';
import { EventSourcedRepository, toNewEvent } from '../../shared/event-sourced-repository';
import { FixedClock, RecordingMailer } from '../../shared/test-doubles.spec-helper';
import { AccountDirectory } from '../account-directory';
import {
  plainAddressHash,
  writeLegacyAccount,
  writeLegacyResetRequest,
} from '../legacy-reservations.spec-helper';
import { PasswordLinkMailer } from '../password-link-mailer';
import { RequestPasswordResetHandler } from '../request-password-reset/request-password-reset.handler';
import { SendPasswordResetEmailCommand } from './send-password-reset-email.command';
import { SendPasswordResetEmailHandler } from './send-password-reset-email.handler';

// The saga's step runs in the sagas' worker (or the projector), outside the e2e suites' reach:
// its rules are tested here, on the real embedded store.
describe('SendPasswordResetEmailHandler', () => {
  const context = {
    actor: 'anonymous',
    correlationId: 'spec',
    auth: { method: 'none' as const, tokenId: null },
  };
  const email = 'ada@example.com';
  let dir: string;
  let store: SqliteEventStore;
  let clock: FixedClock;
  let mailer: RecordingMailer;
  let directory: AccountDirectory;
  let handler: SendPasswordResetEmailHandler;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'reset-email-'));
    store = SqliteEventStore.open(dir);
    clock = new FixedClock(Date.parse('2026-11-24T09:00:00.000Z'));
    mailer = new RecordingMailer();
    const repository = new EventSourcedRepository(store, clock);
    const config = {
      tokenSecret: Buffer.alloc(32, 7),
      publicBaseUrl: 'https://accounts.example.test',
      resetTokenTtlSeconds: 1800,
    } as ChronicleConfig;
    directory = new AccountDirectory(store, repository, clock, config);
    handler = new SendPasswordResetEmailHandler(
      directory,
      new PasswordLinkMailer(repository, mailer, clock, config),
      config,
    );
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const openAccount = async (accountId = 'a-1') => {
    await directory.reserveEmail(email, accountId, context);
    const opened: AccountOpened = {
      type: 'AccountOpened.v1',
      data: {
        accountId,
        email,
        userId: 'u-1',
        roles: ['user'],
        passwordHash: 'h',
        openedAt: clock.now().toISOString(),
      },
    };
    await store.append(accountStreamName(accountId), [toNewEvent(opened, context, clock.now())], 'no_stream');
  };
  const request = async (): Promise<RecordedEvent<PasswordResetRequested['data']>> => {
    await new RequestPasswordResetHandler(store, directory, clock).execute({ email, context } as never);
    const requests: RecordedEvent[] = [];
    for await (const event of store.readAll({ eventTypes: ['PasswordResetRequested.v2'] }))
      requests.push(event);
    return requests.at(-1) as RecordedEvent<PasswordResetRequested['data']>;
  };
  const send = (event: RecordedEvent<PasswordResetRequested['data']>) =>
    handler.execute(new SendPasswordResetEmailCommand(event));
  const tokenOf = (message: MailMessage) => /[?&]token=([A-Za-z0-9_-]+)/.exec(message.text)![1];

  it('mails a known address one link, once, however often the step runs', async () => {
    await openAccount();
    const event = await request();
    await send(event);
    await send(event);
    expect(mailer.sent).toHaveLength(1);
    expect(mailer.sent[0]).toMatchObject({ to: email, id: `password-reset-${event.id}` });
    expect(mailer.sent[0].text).toContain('https://accounts.example.test/reset-password?token=');
  });

  it('sends the same token under the same id when the first send failed', async () => {
    await openAccount();
    const event = await request();
    mailer.failNext = 1;
    await expect(send(event)).rejects.toThrow('connection reset');
    await send(event);
    await send(event);
    expect(mailer.sent).toHaveLength(1);
    const first = tokenOf(mailer.sent[0]);
    // A request's token is derived from its id: another request's differs.
    const other = await request();
    await send(other);
    expect(mailer.sent).toHaveLength(2);
    expect(tokenOf(mailer.sent[1])).not.toBe(first);
    expect(mailer.sent[1].id).toBe(`password-reset-${other.id}`);
  });

  it('sends nothing for a request made before the address had an account', async () => {
    const early = await request();
    await openAccount();
    await send(early);
    expect(mailer.sent).toEqual([]);
  });

  it('names the request and its reservation by the keyed hash of the address, never its plain SHA-256', async () => {
    await openAccount();
    const event = await request();
    const key = addressHasher(Buffer.alloc(32, 7), 'address-streams')(email);
    expect(event.stream).toBe(`resetrequest-${key}`);
    expect(event.data).toEqual({ reservation: `email-${key}`, requestedAt: clock.now().toISOString() });
    expect(JSON.stringify({ ...event, position: null })).not.toContain(plainAddressHash(email));
  });

  it('mails a request stored before the streams were keyed to the account that had the address then', async () => {
    const upcasting = new UpcastingEventStore(store, new UpcasterRegistry(EVENT_UPCASTERS));
    const legacy = await writeLegacyAccount(upcasting, email);
    await writeLegacyResetRequest(upcasting, email);
    const [stored] = await upcasting.readStream(`resetrequest-${plainAddressHash(email)}`);
    expect(stored.type).toBe('PasswordResetRequested.v2');
    await send(stored as RecordedEvent<PasswordResetRequested['data']>);
    expect(mailer.sent).toEqual([expect.objectContaining({ to: email, id: `password-reset-${stored.id}` })]);
    expect(await directory.findById(legacy.accountId)).not.toBeNull();
  });

  it('sends nothing once the request is older than the token lifetime', async () => {
    await openAccount();
    const event = await request();
    clock.time += 1800 * 1000;
    await send(event);
    expect(mailer.sent).toEqual([]);
  });
});
