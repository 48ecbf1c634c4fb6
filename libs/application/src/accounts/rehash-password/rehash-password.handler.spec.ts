import { accountDecider, accountStreamName } from '@chronicle/domain';
import { AccountsWorld, accountsContext, accountsWorld } from '../accounts-world.spec-helper';
import { RehashPasswordCommand } from './rehash-password.command';
import { RehashPasswordHandler } from './rehash-password.handler';

describe('RehashPasswordHandler', () => {
  let world: AccountsWorld;
  let handler: RehashPasswordHandler;

  beforeEach(async () => {
    world = accountsWorld();
    handler = new RehashPasswordHandler(world.repository, world.hasher);
    await world.openAccount('a-1', 'ada@example.com', 'first secret words');
  });
  afterEach(() => world.close());

  const rehash = (verifiedPasswordHash: string) =>
    handler.execute(
      new RehashPasswordCommand('a-1', 'first secret words', verifiedPasswordHash, accountsContext),
    );
  const stored = async () =>
    (await world.store.readStream(accountStreamName('a-1'))).map((event) => event.type);

  it('given the hash the login proved, replaces it with a hash of the password as prepared', async () => {
    await world.write('a-1', [
      { type: 'PasswordRehashed.v1', data: { accountId: 'a-1', passwordHash: 'legacy:x', rehashedAt: 'x' } },
    ]);
    await rehash('legacy:x');
    const { state } = await world.repository.load(accountDecider, accountStreamName('a-1'));
    expect(state).toMatchObject({ passwordHash: 'hash:first secret words', credentialsVersion: 0 });
    const events = await world.store.readStream(accountStreamName('a-1'));
    expect(events.at(-1)).toMatchObject({
      type: 'PasswordRehashed.v1',
      data: { passwordHash: 'hash:first secret words' },
      metadata: { correlationId: 'accounts-spec' },
    });
  });

  it('given a hash changed since the login, writes nothing', async () => {
    await rehash('legacy:x');
    expect(await stored()).toEqual(['AccountOpened.v1']);
  });
});
