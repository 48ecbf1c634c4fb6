import { accountStreamName, userStreamName, ValidationError } from '@chronicle/domain';
import { EmailTakenError } from '../../shared/application-errors';
import { ACCOUNTS_NOW, AccountsWorld, accountsContext, accountsWorld } from '../accounts-world.spec-helper';
import { OpenAccountCommand } from './open-account.command';
import { OpenAccountHandler } from './open-account.handler';

describe('OpenAccountHandler', () => {
  let world: AccountsWorld;
  let handler: OpenAccountHandler;

  beforeEach(() => {
    world = accountsWorld();
    handler = new OpenAccountHandler(world.repository, world.directory, world.hasher, world.config);
  });
  afterEach(() => world.close());

  const ada = { email: 'ada@example.com', name: 'Ada', age: 36 };
  const open = (account: Record<string, unknown>, password: unknown) =>
    handler.execute(new OpenAccountCommand(account, password, accountsContext));
  const refusal = async (account: Record<string, unknown>, password: unknown) => {
    const error = await open(account, password).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).errors.map((found) => found.field).sort();
  };
  const streams = async () => {
    const names: string[] = [];
    for await (const event of world.store.readAll()) names.push(event.stream);
    return names;
  };

  it('given a password, reserves the address, registers the user, then opens the account with its hash', async () => {
    const { accountId, userId } = await open({ ...ada, roles: ['admin'] }, 'first secret words');
    expect(accountId).not.toBe(userId);
    const [user] = await world.store.readStream(userStreamName(userId));
    expect(user).toMatchObject({
      type: 'UserRegistered.v2',
      data: { userId, accountId, name: 'Ada', age: 36 },
      metadata: { correlationId: 'accounts-spec' },
    });
    const account = await world.store.readStream(accountStreamName(accountId));
    expect(account.map((event) => event.type)).toEqual(['AccountOpened.v1']);
    expect(account[0].data).toMatchObject({
      accountId,
      userId,
      email: 'ada@example.com',
      roles: ['user', 'admin'],
      passwordHash: 'hash:first secret words',
      openedAt: new Date(ACCOUNTS_NOW).toISOString(),
    });
    expect((await world.directory.findByEmail('ada@example.com'))?.id).toBe(accountId);
    expect((await streams())[0]).toMatch(/^email-/);
  });

  it('given no password, opens the account with one no one knows, and its invitation', async () => {
    const { accountId } = await open(ada, null);
    const account = await world.store.readStream(accountStreamName(accountId));
    expect(account.map((event) => event.type)).toEqual(['AccountOpened.v1', 'AccountInvited.v1']);
    expect(account[0].data.passwordHash).toMatch(/^hash:[A-Za-z0-9_-]{43}$/);
    expect(account[1].data).toEqual({
      accountId,
      invitedAt: new Date(ACCOUNTS_NOW).toISOString(),
      expiresAt: new Date(ACCOUNTS_NOW + 7 * 24 * 3600_000).toISOString(),
    });
    const again = await open({ ...ada, email: 'bob@example.com' }, null);
    const [other] = await world.store.readStream(accountStreamName(again.accountId));
    expect(other.data.passwordHash).not.toBe(account[0].data.passwordHash);
  });

  it('given an address already taken, refuses it and writes neither user nor account', async () => {
    await open(ada, 'first secret words');
    const before = await streams();
    await expect(open({ ...ada, email: ' ADA@example.com' }, 'other secret words')).rejects.toBeInstanceOf(
      EmailTakenError,
    );
    expect(await streams()).toEqual(before);
  });

  it('reports every problem of the account and its password at once, and writes nothing', async () => {
    expect(await refusal({ email: 'ada@example.com', name: '', age: -1 }, 'ada@example.com')).toEqual([
      'age',
      'name',
      'password',
    ]);
    expect(await refusal(ada, 42)).toEqual(['password']);
    expect(await refusal(ada, 'short')).toEqual(['password']);
    expect(await refusal({ ...ada, roles: ['nobody'] }, 'first secret words')).toEqual(['roles']);
    expect(await streams()).toEqual([]);
  });

  it('judges the password only against an address that is one', async () => {
    expect(await refusal({ ...ada, email: 'not an address' }, 'not an address')).toEqual(['email']);
  });

  it('takes no password to judge for an invitation', async () => {
    expect(await refusal({ ...ada, age: -1 }, null)).toEqual(['age']);
  });
});
