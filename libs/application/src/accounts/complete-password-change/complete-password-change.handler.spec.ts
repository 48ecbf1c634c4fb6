import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChronicleConfig } from '@chronicle/config';
import { AccountEvent, accountStreamName, passwordChangeStreamName } from '@chronicle/domain';
import { RecordedEvent, SqliteEventStore } from '@chronicle/event-store';
import { SystemClock } from '../../shared/clock';
import { EventSourcedRepository, toNewEvent } from '../../shared/event-sourced-repository';
import { RecordingMailer } from '../../shared/test-doubles.spec-helper';
import { AccountDirectory } from '../account-directory';
import { CompletePasswordChangeCommand } from './complete-password-change.command';
import { CompletePasswordChangeHandler } from './complete-password-change.handler';

// The saga's step runs in the sagas' worker (or the projector), outside the e2e suites' reach.
describe('CompletePasswordChangeHandler', () => {
  const context = { actor: 'a-1', correlationId: 'spec', auth: { method: 'basic' as const, tokenId: null } };
  let dir: string;
  let store: SqliteEventStore;
  let mailer: RecordingMailer;
  let handler: CompletePasswordChangeHandler;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'password-change-'));
    store = SqliteEventStore.open(dir);
    mailer = new RecordingMailer();
    const clock = new SystemClock();
    const repository = new EventSourcedRepository(store, clock);
    handler = new CompletePasswordChangeHandler(
      repository,
      new AccountDirectory(store, repository, clock, { tokenSecret: Buffer.alloc(32, 7) } as ChronicleConfig),
      mailer,
    );
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** An account, then a change of its password: the event the saga is fed. */
  const changed = async (accountId = 'a-1'): Promise<RecordedEvent> => {
    const now = new Date();
    const events: AccountEvent[] = [
      {
        type: 'AccountOpened.v1',
        data: {
          accountId,
          email: 'ada@example.com',
          userId: 'u-1',
          roles: ['user'],
          passwordHash: 'h1',
          openedAt: now.toISOString(),
        },
      },
      {
        type: 'PasswordChanged.v1',
        data: { accountId, passwordHash: 'h2', changedAt: now.toISOString(), credentialsVersion: 1 },
      },
    ];
    await store.append(
      accountStreamName(accountId),
      events.map((event) => toNewEvent(event, context, now)),
      'no_stream',
    );
    return (await store.readStream(accountStreamName(accountId)))[1];
  };
  const complete = (change: RecordedEvent) =>
    handler.execute(new CompletePasswordChangeCommand(change as never));

  it('sends the notice once per change, however often the step runs, and records both steps', async () => {
    const change = await changed();
    await complete(change);
    await complete(change);
    expect(mailer.sent).toHaveLength(1);
    expect(mailer.sent[0]).toMatchObject({ to: 'ada@example.com', id: `password-changed-${change.id}` });
    const recorded = await store.readStream(passwordChangeStreamName(change.id));
    expect(recorded.map((event) => event.type)).toEqual([
      'AccessTokensRevoked.v1',
      'PasswordChangeNoticeSent.v1',
    ]);
    expect(recorded.every((event) => event.metadata.causationId === change.id)).toBe(true);
  });

  it('sends the notice again under the same id after a failed send, and only then records it', async () => {
    const change = await changed();
    mailer.failNext = 1;
    await expect(complete(change)).rejects.toThrow('connection reset');
    expect((await store.readStream(passwordChangeStreamName(change.id))).map((event) => event.type)).toEqual([
      'AccessTokensRevoked.v1',
    ]);
    await complete(change);
    expect(mailer.sent.map((message) => message.id)).toEqual([`password-changed-${change.id}`]);
  });
});
