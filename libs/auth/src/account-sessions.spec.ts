import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AccessTokenClaims,
  AccountDirectory,
  EventSourcedRepository,
  Principal,
  SYSTEM_AUTH,
  toNewEvent,
} from '@chronicle/application';
import { FixedClock } from '@chronicle/application/testing';
import { ChronicleConfig } from '@chronicle/config';
import { Logger } from '@nestjs/common';
import { AccountEvent, accountStreamName, SessionEnded, sessionStreamName } from '@chronicle/domain';
import {
  EventSubscription,
  SqliteCheckpointStore,
  SqliteEventStore,
  SubscribeOptions,
  SubscriptionMessage,
} from '@chronicle/event-store';
import { AccountSessions } from './account-sessions';
import { VerifiedCredentials } from './verified-credentials';
import { TokenRejection } from './token-rejection';

const iso = (ms: number) => new Date(ms).toISOString();

describe('AccountSessions', () => {
  let dir: string;
  let store: SqliteEventStore;
  let clock: FixedClock;
  let credentials: VerifiedCredentials;
  let sessions: AccountSessions;
  let directory: AccountDirectory;
  const context = { actor: 'system', correlationId: 'spec', auth: SYSTEM_AUTH };

  const newSessions = () => {
    directory = new AccountDirectory(store, new EventSourcedRepository(store, clock), clock, {
      tokenSecret: Buffer.alloc(32, 7),
    } as ChronicleConfig);
    return new AccountSessions(store, SqliteCheckpointStore.open(':memory:'), directory, clock, credentials);
  };

  /** Appends to the account's stream, as a handler of any process would. */
  const write = (accountId: string, ...events: AccountEvent[]) =>
    append(accountStreamName(accountId), events);
  const endSession = (accountId: string, sessionId: string, expiresAt = clock.time + 3_600_000) => {
    const ended: SessionEnded = {
      type: 'SessionEnded.v1',
      data: { accountId, sessionId, endedWith: 't-2', endedAt: iso(clock.time), expiresAt: iso(expiresAt) },
    };
    return append(sessionStreamName(sessionId), [ended]);
  };
  const append = async (stream: string, events: Array<{ type: string; data: object }>) => {
    const current = (await store.readStream(stream)).length;
    await store.append(
      stream,
      events.map((event) => toNewEvent(event as AccountEvent, context, clock.now())),
      current === 0 ? 'no_stream' : current - 1,
    );
  };
  const opened = (accountId: string, roles: ('user' | 'admin')[] = ['user']): AccountEvent => ({
    type: 'AccountOpened.v1',
    data: {
      accountId,
      email: `${accountId}@example.com`,
      userId: `user-${accountId}`,
      roles,
      passwordHash: 'h',
      openedAt: iso(clock.time),
    },
  });
  const claims = (accountId: string, overrides: Partial<AccessTokenClaims> = {}): AccessTokenClaims => ({
    accountId,
    tokenId: 't-1',
    sessionId: 's-1',
    credentialsVersion: 0,
    issuedAt: clock.time,
    expiresAt: clock.time + 3_600_000,
    ...overrides,
  });
  const revoked = new TokenRejection('revoked', 't-1');
  const principal = (accountId: string, roles = ['user']): Principal => ({
    accountId,
    userId: `user-${accountId}`,
    roles: roles as Principal['roles'],
    method: 'bearer',
    tokenId: 't-1',
    sessionId: 's-1',
    credentialsVersion: 0,
  });
  /** Waits for the live subscription to apply something, with a generous ceiling. */
  const eventually = async (check: () => Promise<boolean>) => {
    for (let attempt = 0; attempt < 1_000; attempt++) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('the sessions never applied the event');
  };
  /** The sessions held as ended for `accountId`, in memory. */
  const endedSessionsHeld = (accountId: string) => {
    const held = (sessions as unknown as { accounts: Map<string, { endedSessions: Map<string, number> }> })
      .accounts;
    return [...(held.get(accountId)?.endedSessions.keys() ?? [])];
  };
  /** Starts following the store and waits for the history to be applied. */
  const caughtUp = async () => {
    void sessions.start();
    await eventually(() => Promise.resolve(sessions.isCaughtUp));
  };

  beforeEach(() => {
    // The processor's progress lines ("Caught up after ...") say nothing a test checks.
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    dir = mkdtempSync(join(tmpdir(), 'account-sessions-'));
    store = SqliteEventStore.open(dir, { pollIntervalMs: 5 });
    clock = new FixedClock(Date.parse('2026-11-22T09:00:00.000Z'));
    credentials = new VerifiedCredentials({ tokenSecret: Buffer.alloc(32, 1) } as ChronicleConfig, clock);
    sessions = newSessions();
  });
  afterEach(async () => {
    await sessions.stop();
    jest.restoreAllMocks();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers the principal of a live token, with the roles of its account', async () => {
    await write('a1', opened('a1', ['user', 'admin']));
    await caughtUp();

    expect(await sessions.principalFor(claims('a1'))).toEqual(principal('a1', ['user', 'admin']));
  });

  it('follows only the session events, and answers for a delivered account without reading its stream', async () => {
    const subscribe = jest.spyOn(store, 'subscribeToAll');
    await write('a1', opened('a1'));
    await caughtUp();
    const findById = jest.spyOn(directory, 'findById');

    expect(await sessions.principalFor(claims('a1'))).toEqual(principal('a1'));
    expect(findById).not.toHaveBeenCalled();
    expect(subscribe.mock.calls).toEqual([
      [
        {
          after: undefined,
          eventTypes: [
            'AccountOpened.v1',
            'AccountClosed.v1',
            'PasswordReset.v1',
            'PasswordChanged.v1',
            'SessionEnded.v1',
          ],
        },
      ],
    ]);
  });

  it('closes its subscription on shutdown and returns once its loop has ended', async () => {
    const subscribe = jest.spyOn(store, 'subscribeToAll');
    await caughtUp();
    const [subscription] = subscribe.mock.results.map((result) => result.value as { isClosed: boolean });

    await sessions.stop();

    expect(subscription.isClosed).toBe(true);
    expect(subscribe).toHaveBeenCalledTimes(1);
  }, 5_000);

  it('resubscribes after a failure from the last event it applied, logging the failure', async () => {
    const failure = jest.spyOn(Logger.prototype, 'error').mockImplementation();
    const real = store.subscribeToAll.bind(store);
    // The first subscription brings the history, then the connection drops.
    const dropping = (options?: SubscribeOptions): EventSubscription => {
      const inner = real(options);
      return {
        close: () => inner.close(),
        async *[Symbol.asyncIterator](): AsyncGenerator<SubscriptionMessage> {
          for await (const message of inner) {
            yield message;
            if (message.kind === 'caught-up') throw new Error('connection lost');
          }
        },
      };
    };
    const subscribe = jest.spyOn(store, 'subscribeToAll').mockImplementationOnce(dropping);
    const { position } = await store.append(
      accountStreamName('a1'),
      [toNewEvent(opened('a1'), context, clock.now())],
      'no_stream',
    );
    await caughtUp();

    await eventually(() => Promise.resolve(subscribe.mock.calls.length === 2));

    expect(subscribe.mock.calls[1][0]).toMatchObject({ after: position });
    expect(failure).toHaveBeenCalledWith(
      'Processing failed after position 1: connection lost; retrying in 500 ms',
      expect.stringContaining('Error: connection lost'),
    );
    expect(await sessions.principalFor(claims('a1'))).toEqual(principal('a1'));
  });

  it('refuses a token from the instant it expires', async () => {
    await write('a1', opened('a1'));
    await caughtUp();

    expect(await sessions.principalFor(claims('a1', { expiresAt: clock.time + 1 }))).toEqual(principal('a1'));
    expect(await sessions.principalFor(claims('a1', { expiresAt: clock.time }))).toEqual(
      new TokenRejection('expired', 't-1'),
    );
  });

  it('refuses tokens of older credentials versions than the history holds, whatever their times', async () => {
    await write('a1', opened('a1'), {
      type: 'PasswordChanged.v1',
      data: { accountId: 'a1', passwordHash: 'h2', changedAt: iso(clock.time), credentialsVersion: 1 },
    });
    await caughtUp();

    // Issued by a host whose clock runs two minutes ahead: the time does not save it.
    expect(await sessions.principalFor(claims('a1', { issuedAt: clock.time + 120_000 }))).toEqual(revoked);
    expect(await sessions.principalFor(claims('a1', { credentialsVersion: 1 }))).toEqual({
      ...principal('a1'),
      credentialsVersion: 1,
    });
  });

  it('counts a reset and a change stored without a version as one version each', async () => {
    await write(
      'a1',
      opened('a1'),
      {
        type: 'PasswordReset.v1',
        data: { accountId: 'a1', tokenId: 'rt', passwordHash: 'h2', resetAt: iso(0) },
      },
      { type: 'PasswordChanged.v1', data: { accountId: 'a1', passwordHash: 'h3', changedAt: iso(0) } },
    );
    await caughtUp();

    expect(await sessions.principalFor(claims('a1', { credentialsVersion: 1 }))).toEqual(revoked);
    expect(await sessions.principalFor(claims('a1', { credentialsVersion: 2 }))).not.toEqual(revoked);
  });

  describe('a restart', () => {
    let checkpoints: SqliteCheckpointStore;
    const restarted = async () => {
      await sessions.stop();
      sessions = new AccountSessions(store, checkpoints, directory, clock, credentials);
    };

    beforeEach(() => {
      checkpoints = SqliteCheckpointStore.open(join(dir, 'checkpoints.db'));
      sessions = new AccountSessions(store, checkpoints, directory, clock, credentials);
    });
    afterEach(() => checkpoints.close());

    it('reads the sessions back with their checkpoint and replays only the events after it', async () => {
      await write('a1', opened('a1'), {
        type: 'PasswordChanged.v1',
        data: { accountId: 'a1', passwordHash: 'h2', changedAt: iso(clock.time), credentialsVersion: 1 },
      });
      await endSession('a1', 's-2');
      await caughtUp();
      const head = await store.headPosition();
      await restarted();
      const subscribe = jest.spyOn(store, 'subscribeToAll');

      await caughtUp();
      const findById = jest.spyOn(directory, 'findById');

      expect(subscribe.mock.calls[0][0]).toMatchObject({ after: head });
      expect(await sessions.principalFor(claims('a1'))).toEqual(revoked);
      expect(await sessions.principalFor(claims('a1', { credentialsVersion: 1, sessionId: 's-2' }))).toEqual(
        revoked,
      );
      expect(await sessions.principalFor(claims('a1', { credentialsVersion: 1 }))).toEqual({
        ...principal('a1'),
        credentialsVersion: 1,
      });
      expect(findById).not.toHaveBeenCalled();
    });

    it('applies a change stored without a version once, not again after the restart', async () => {
      await write('a1', opened('a1'), {
        type: 'PasswordChanged.v1',
        data: { accountId: 'a1', passwordHash: 'h2', changedAt: iso(0) },
      });
      await caughtUp();
      await restarted();
      await write('a2', opened('a2'));

      await caughtUp();

      expect(await sessions.principalFor(claims('a1', { credentialsVersion: 1 }))).toEqual({
        ...principal('a1'),
        credentialsVersion: 1,
      });
      expect(await sessions.principalFor(claims('a2'))).toEqual(principal('a2'));
    });

    it('adds the stored ended sessions to an entry a request read from its stream before they came back', async () => {
      await write('a1', opened('a1'));
      await endSession('a1', 's-2');
      await caughtUp();
      await restarted();

      // Read from the stream (its ended sessions are in other streams) before the processor starts.
      expect(await sessions.principalFor(claims('a1'))).toEqual(principal('a1'));
      await caughtUp();

      expect(await sessions.principalFor(claims('a1', { sessionId: 's-2' }))).toEqual(revoked);
      expect(await sessions.principalFor(claims('a1'))).toEqual(principal('a1'));
    });

    it('reads back no ended session whose tokens expired meanwhile, into a new entry or one a request read', async () => {
      await write('a1', opened('a1'));
      await write('a2', opened('a2'));
      await endSession('a1', 's-gone', clock.time + 1_000);
      await endSession('a1', 's-live', clock.time + 60_000);
      await endSession('a2', 's-gone-2', clock.time + 1_000);
      await endSession('a2', 's-live-2', clock.time + 60_000);
      await caughtUp();
      await restarted();
      // The first two expire at this very instant.
      clock.time += 1_000;

      // a2 read from its stream by a request before the stored entries come back; a1 not.
      expect(await sessions.principalFor(claims('a2'))).toEqual(principal('a2'));
      await caughtUp();

      expect(endedSessionsHeld('a1')).toEqual(['s-live']);
      expect(endedSessionsHeld('a2')).toEqual(['s-live-2']);
    });

    it('while the events after the checkpoint replay, trusts a stored entry only as far as its stream says', async () => {
      await write('a1', opened('a1'));
      await write('a2', opened('a2'));
      await caughtUp();
      await restarted();
      const changed = (accountId: string): AccountEvent => ({
        type: 'PasswordChanged.v1',
        data: { accountId, passwordHash: 'h2', changedAt: iso(clock.time), credentialsVersion: 1 },
      });
      await write('a1', changed('a1'));
      await write('a2', changed('a2'));
      // a1 is read from its stream (version 1) before the stored entries (version 0) come back.
      expect(await sessions.principalFor(claims('a1'))).toEqual(revoked);

      // The replay is held back once the stored entries are read: the changes are not applied yet.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let restored!: () => void;
      const subscribed = new Promise<void>((resolve) => (restored = resolve));
      const subscribe = store.subscribeToAll.bind(store);
      jest.spyOn(store, 'subscribeToAll').mockImplementationOnce((options) => {
        const subscription = subscribe(options);
        restored();
        return {
          close: () => subscription.close(),
          async *[Symbol.asyncIterator]() {
            await held;
            yield* subscription;
          },
        };
      });
      void sessions.start();
      await subscribed;

      try {
        expect(sessions.isCaughtUp).toBe(false);
        expect(await sessions.principalFor(claims('a1'))).toEqual(revoked);
        expect(await sessions.principalFor(claims('a2'))).toEqual(revoked);
      } finally {
        release();
      }
      await eventually(() => Promise.resolve(sessions.isCaughtUp));
      expect(await sessions.principalFor(claims('a1'))).toEqual(revoked);
      expect(await sessions.principalFor(claims('a2', { credentialsVersion: 1 }))).toEqual({
        ...principal('a2'),
        credentialsVersion: 1,
      });
    });

    it('keeps what a request read from the stream before the stored entries came back', async () => {
      await write('a1', opened('a1'));
      await caughtUp();
      await restarted();
      await write('a1', {
        type: 'PasswordChanged.v1',
        data: { accountId: 'a1', passwordHash: 'h2', changedAt: iso(clock.time), credentialsVersion: 1 },
      });

      // Read from the stream before the processor starts: version 1 already.
      expect(await sessions.principalFor(claims('a1'))).toEqual(revoked);
      await caughtUp();

      expect(await sessions.principalFor(claims('a1'))).toEqual(revoked);
      expect(await sessions.principalFor(claims('a1', { credentialsVersion: 1 }))).toEqual({
        ...principal('a1'),
        credentialsVersion: 1,
      });
    });
  });

  it('applies live events: a session ended by another process stops working, the others go on', async () => {
    await write('a1', opened('a1'));
    await caughtUp();
    expect(await sessions.principalFor(claims('a1'))).toEqual(principal('a1'));

    await endSession('a1', 's-1');

    await eventually(async () => (await sessions.principalFor(claims('a1'))) instanceof TokenRejection);
    expect(await sessions.principalFor(claims('a1', { tokenId: 't-9' }))).toEqual(
      new TokenRejection('revoked', 't-9'),
    );
    expect(await sessions.principalFor(claims('a1', { sessionId: 's-2' }))).toEqual({
      ...principal('a1'),
      sessionId: 's-2',
    });
  });

  it('forgets an ended session once its tokens have expired anyway', async () => {
    await write('a1', opened('a1'));
    expect(await sessions.principalFor(claims('a1'))).not.toEqual(revoked);
    sessions.sessionEnded('a1', 's-1', clock.time + 1_000);
    // Its tokens expire at this very instant: no record is kept of it, even for a moment.
    sessions.sessionEnded('a1', 's-old', clock.time);
    expect(await sessions.principalFor(claims('a1'))).toEqual(revoked);
    expect(endedSessionsHeld('a1')).toEqual(['s-1']);

    clock.time += 1_000;
    sessions.sessionEnded('a1', 's-2', clock.time + 1_000);

    expect(endedSessionsHeld('a1')).toEqual(['s-2']);
  });

  it('before the catch-up, trusts no account the replay has only opened: a change or an ended session further on holds', async () => {
    await write('a1', opened('a1'), {
      type: 'PasswordChanged.v1',
      data: { accountId: 'a1', passwordHash: 'h2', changedAt: iso(clock.time), credentialsVersion: 1 },
    });
    await endSession('a1', 's-1');
    // A live session: its stream holds its start, no end.
    const expiresAt = iso(clock.time + 3_600_000);
    await append(sessionStreamName('s-2'), [
      {
        type: 'SessionStarted.v1',
        data: {
          accountId: 'a1',
          sessionId: 's-2',
          startedWith: 'basic',
          credentialsVersion: 1,
          startedAt: iso(clock.time),
          expiresAt,
        },
      },
    ]);
    const real = store.subscribeToAll.bind(store);
    // The replay delivers the opening, then stalls before the rest, as a long history does.
    jest.spyOn(store, 'subscribeToAll').mockImplementationOnce((options?: SubscribeOptions) => {
      const inner = real(options);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      return {
        close: async () => {
          release();
          await inner.close();
        },
        async *[Symbol.asyncIterator](): AsyncGenerator<SubscriptionMessage> {
          for await (const message of inner) {
            yield message;
            if (message.kind === 'event') await held;
          }
        },
      };
    });
    void sessions.start();
    await eventually(() => Promise.resolve(sessions.position !== null));

    expect(sessions.isCaughtUp).toBe(false);
    expect(await sessions.principalFor(claims('a1'))).toEqual(revoked);
    // Version 0 in a session that has not ended: the change further on refuses it all the same.
    expect(await sessions.principalFor(claims('a1', { sessionId: 's-2' }))).toEqual(revoked);
    expect(await sessions.principalFor(claims('a1', { credentialsVersion: 1 }))).toEqual(revoked);
    expect(await sessions.principalFor(claims('a1', { credentialsVersion: 1, sessionId: 's-2' }))).toEqual({
      ...principal('a1'),
      credentialsVersion: 1,
      sessionId: 's-2',
    });
  });

  describe("this process's own writes, before their events come round", () => {
    // No subscription runs here: only the direct calls can revoke.
    beforeEach(() => write('a1', opened('a1')));

    it('ends a session at once', async () => {
      expect(await sessions.principalFor(claims('a1'))).toEqual(principal('a1'));

      sessions.sessionEnded('a1', 's-1', clock.time + 3_600_000);

      expect(await sessions.principalFor(claims('a1'))).toEqual(revoked);
      expect(await sessions.principalFor(claims('a1', { sessionId: 's-2' }))).not.toEqual(revoked);
    });

    it('revokes tokens of older credentials versions, never moving the version back, and drops cached Basic credentials', async () => {
      expect(await sessions.principalFor(claims('a1'))).toEqual(principal('a1'));
      const cached = credentials.keyFor('a1@example.com', 'pw');
      credentials.remember(cached.key, cached.generation, { ...principal('a1'), method: 'basic' });

      sessions.credentialsChanged('a1', 2);
      sessions.credentialsChanged('a1', 1);

      expect(await sessions.principalFor(claims('a1', { credentialsVersion: 1 }))).toEqual(revoked);
      expect(await sessions.principalFor(claims('a1', { credentialsVersion: 2 }))).not.toEqual(revoked);
      expect(credentials.lookup(cached.key)).toBeNull();
    });
  });

  describe('an account the subscription has not delivered yet', () => {
    it('is loaded from its stream, credentials version included', async () => {
      await write('a1', opened('a1'), {
        type: 'PasswordChanged.v1',
        data: { accountId: 'a1', passwordHash: 'h2', changedAt: iso(clock.time), credentialsVersion: 3 },
      });

      expect(await sessions.principalFor(claims('a1', { credentialsVersion: 2 }))).toEqual(revoked);
      expect(await sessions.principalFor(claims('a1', { credentialsVersion: 3 }))).not.toEqual(revoked);
    });

    it('is refused when it does not exist', async () => {
      expect(await sessions.principalFor(claims(randomUUID()))).toEqual(revoked);
    });
  });
});
