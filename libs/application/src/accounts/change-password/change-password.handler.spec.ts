import { ChronicleConfig } from '@chronicle/config';
import {
  accountDecider,
  accountStreamName,
  NotFoundError,
  ValidationError,
  WrongPasswordError,
} from '@chronicle/domain';
import { AttemptCounters, AttemptLimits, TooManyAttemptsError } from '../../shared/attempt-limits';
import { AccountsWorld, accountsContext, accountsWorld, basicPrincipal } from '../accounts-world.spec-helper';
import { ChangePasswordCommand } from './change-password.command';
import { ChangePasswordHandler } from './change-password.handler';

/** Counts per key and window, in memory; marks are not used by a change. */
class Counts extends AttemptCounters {
  readonly counts = new Map<string, number>();
  add(key: string): Promise<number> {
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    return Promise.resolve(count);
  }
  remove(key: string): Promise<void> {
    this.counts.set(key, (this.counts.get(key) ?? 0) - 1);
    return Promise.resolve();
  }
  mark(): Promise<void> {
    return Promise.resolve();
  }
  marked(): Promise<boolean> {
    return Promise.resolve(false);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('ChangePasswordHandler', () => {
  let world: AccountsWorld;
  let counts: Counts;
  let handler: ChangePasswordHandler;
  const principal = basicPrincipal;

  beforeEach(async () => {
    world = accountsWorld();
    counts = new Counts();
    const limits = new AttemptLimits(counts, world.clock, {
      tokenSecret: Buffer.alloc(32, 1),
      loginAttemptsPerAccount: 2,
    } as ChronicleConfig);
    handler = new ChangePasswordHandler(world.repository, world.hasher, limits);
    await world.openAccount('a-1', 'ada@example.com', 'first secret words');
  });
  afterEach(() => world.close());

  const change = (oldPassword: string, newPassword: string, who = principal) =>
    handler.execute(new ChangePasswordCommand(who, oldPassword, newPassword, accountsContext));
  const account = async () =>
    (await world.repository.load(accountDecider, accountStreamName('a-1'))).state as { passwordHash: string };

  it('given the right old password, when changed, then stores the new hash and answers the next credentials version', async () => {
    const result = await change('first secret words', 'second secret words');
    expect(result).toEqual({ accountId: 'a-1', credentialsVersion: 1, position: expect.anything() });
    expect((await account()).passwordHash).toBe('hash:second secret words');
    const [, changed] = await world.store.readStream(accountStreamName('a-1'));
    expect(changed).toMatchObject({
      type: 'PasswordChanged.v1',
      position: result.position,
      metadata: { correlationId: 'accounts-spec' },
    });
    // A second change moves the version on again, and checks `old` against the new hash.
    expect((await change('second secret words', 'third secret words')).credentialsVersion).toBe(2);
    expect(world.hasher.verified.at(-1)).toEqual(['hash:second secret words', 'second secret words']);
  });

  it('given a wrong old password, refuses it, changes nothing and counts the failure against the account', async () => {
    await expect(change('not the password', 'second secret words')).rejects.toBeInstanceOf(
      WrongPasswordError,
    );
    expect((await account()).passwordHash).toBe('hash:first secret words');
    expect(counts.counts.get('password-change:a-1')).toBe(1);
    // The right one is taken back: only failures remain.
    await change('first secret words', 'second secret words');
    expect(counts.counts.get('password-change:a-1')).toBe(1);
  });

  it('given too many wrong old passwords, refuses even the right one', async () => {
    await expect(change('wrong 1', 'second secret words')).rejects.toBeInstanceOf(WrongPasswordError);
    await expect(change('wrong 2', 'second secret words')).rejects.toBeInstanceOf(WrongPasswordError);
    await expect(change('first secret words', 'second secret words')).rejects.toBeInstanceOf(
      TooManyAttemptsError,
    );
  });

  it('given a rehashable old hash, takes the old password as proved', async () => {
    await world.write('a-2', [
      {
        type: 'AccountOpened.v1',
        data: {
          accountId: 'a-2',
          email: 'bob@example.com',
          userId: 'u-2',
          roles: ['user'],
          passwordHash: 'legacy:first secret words',
          openedAt: 'x',
        },
      },
    ]);
    const result = await change('first secret words', 'second secret words', {
      ...principal,
      accountId: 'a-2',
    });
    expect(result.credentialsVersion).toBe(1);
  });

  it('given a new password the policy refuses, refuses it after checking the old one', async () => {
    await expect(change('first secret words', 'ada@example.com')).rejects.toBeInstanceOf(ValidationError);
    // The policy names the request's member: `new`.
    await expect(change('first secret words', 'ada@example.com')).rejects.toMatchObject({
      errors: [{ field: 'new' }],
    });
    expect((await account()).passwordHash).toBe('hash:first secret words');
  });

  it('given no account, answers not found before any password check', async () => {
    await expect(change('x', 'second secret words', { ...principal, accountId: 'gone' })).rejects.toEqual(
      new NotFoundError('Account'),
    );
    expect(world.hasher.verified).toEqual([]);
  });

  it('given a closed account, answers not found', async () => {
    await world.write('a-1', [
      { type: 'AccountClosed.v1', data: { accountId: 'a-1', userId: 'u-a-1', closedAt: 'x' } },
    ]);
    await expect(change('first secret words', 'second secret words')).rejects.toBeInstanceOf(NotFoundError);
    expect(world.hasher.verified).toEqual([]);
  });
});
