import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotFoundError, Role, userDecider, userStreamName, ValidationError } from '@chronicle/domain';
import { SqliteEventStore } from '@chronicle/event-store';
import { ForbiddenError, PreconditionFailedError } from '../../shared/application-errors';
import { CommandContext } from '../../shared/command-context';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { Principal } from '../../shared/principal';
import { FixedClock } from '../../shared/test-doubles.spec-helper';
import { PatchUserCommand } from './patch-user.command';
import { PatchUserHandler } from './patch-user.handler';

const NOW = Date.parse('2026-11-27T09:00:00.000Z');
const CONTEXT: CommandContext = {
  actor: 'account-of-ada',
  correlationId: 'c-patch',
  clientRequestId: 'r-7',
  auth: { method: 'bearer', tokenId: 't-1' },
};
const principal = (userId: string, ...roles: Role[]): Principal => ({
  accountId: `account-of-${userId}`,
  userId,
  roles,
  method: 'bearer',
  tokenId: 't-1',
  credentialsVersion: 0,
});
const ADA = {
  exists: true,
  id: 'ada',
  accountId: 'account-of-ada',
  name: 'Ada Lovelace',
  age: 36,
  createdon: '2026-11-27T09:00:00.000Z',
  modifiedon: '2026-11-27T09:00:00.000Z',
};

describe('PatchUserHandler', () => {
  let dir: string;
  let store: SqliteEventStore;
  let clock: FixedClock;
  let handler: PatchUserHandler;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'patch-user-'));
    store = SqliteEventStore.open(dir);
    clock = new FixedClock(NOW);
    const repository = new EventSourcedRepository(store, clock);
    handler = new PatchUserHandler(repository);
    // Given the user ada, registered at NOW.
    await repository.handle(
      userDecider,
      userStreamName('ada'),
      (_state, now) => ({
        type: 'RegisterUser' as const,
        userId: 'ada',
        accountId: 'account-of-ada',
        fields: { name: 'Ada Lovelace', age: 36 },
        now: now.toISOString(),
      }),
      CONTEXT,
    );
    clock.time = NOW + 60_000;
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const patch = (
    userId: string,
    body: Record<string, unknown>,
    who = principal('ada', 'user'),
    ifMatch?: number[],
  ) => handler.execute(new PatchUserCommand(userId, body, who, CONTEXT, ifMatch));
  const events = (userId = 'ada') => store.readStream(userStreamName(userId));

  it("appends the user's own change, and answers the user, its revision, the fields patched and where it landed", async () => {
    const result = await patch('ada', { age: 37 });

    const [, patched, ...more] = await events();
    expect(more).toEqual([]);
    expect(result).toEqual({
      user: { ...ADA, age: 37, modifiedon: '2026-11-27T09:01:00.000Z' },
      revision: 1,
      patched: { age: 37 },
      position: patched.position,
    });
    expect(patched).toMatchObject({
      revision: 1,
      type: 'UserPatched.v1',
      data: { userId: 'ada', changes: { age: 37 }, modifiedon: '2026-11-27T09:01:00.000Z' },
      metadata: {
        actor: 'account-of-ada',
        correlationId: 'c-patch',
        clientRequestId: 'r-7',
        auth: { method: 'bearer', tokenId: 't-1' },
        occurredAt: '2026-11-27T09:01:00.000Z',
      },
    });
  });

  it("lets an admin change another's user", async () => {
    const result = await patch('ada', { name: 'Ada King' }, principal('root', 'admin'));

    expect(result).toMatchObject({
      user: { id: 'ada', name: 'Ada King' },
      revision: 1,
      patched: { name: 'Ada King' },
    });
  });

  it("refuses another user's change to a non-admin before reading anything", async () => {
    const reads = jest.spyOn(store, 'readStream');

    await expect(patch('ada', { age: 37 }, principal('grace', 'user', 'auditor'))).rejects.toThrow(
      new ForbiddenError('You may change only your own user'),
    );
    await expect(patch('nobody', { age: 'old' }, principal('grace', 'user'))).rejects.toThrow(ForbiddenError);

    expect(reads).not.toHaveBeenCalled();
    expect(await events()).toHaveLength(1);
  });

  it('appends nothing for a patch that changes nothing, and says it landed nowhere', async () => {
    const result = await patch('ada', { age: 36, name: 'Ada Lovelace' });

    expect(result).toEqual({
      user: ADA,
      revision: 0,
      patched: { name: 'Ada Lovelace', age: 36 },
      position: null,
    });
    expect(await events()).toHaveLength(1);
  });

  it('changes the user when If-Match names its revision, and refuses it when not', async () => {
    const refused = patch('ada', { age: 37 }, principal('ada', 'user'), [1]);
    await expect(refused).rejects.toThrow(PreconditionFailedError);
    await expect(refused).rejects.toMatchObject({ currentRevision: 0 });
    expect(await events()).toHaveLength(1);

    expect(await patch('ada', { age: 37 }, principal('ada', 'user'), [0])).toMatchObject({ revision: 1 });
  });

  it('refuses a user that does not exist', async () => {
    await expect(patch('grace', { age: 40 }, principal('root', 'admin'))).rejects.toThrow(NotFoundError);
    expect(await events('grace')).toEqual([]);
  });

  it('refuses an invalid patch the same for every user, existing or not', async () => {
    for (const userId of ['ada', 'grace']) {
      await expect(patch(userId, { age: 'old' }, principal('root', 'admin'))).rejects.toThrow(
        ValidationError,
      );
      await expect(patch(userId, { createdon: NOW }, principal('root', 'admin'))).rejects.toMatchObject({
        errors: [{ field: 'createdon', message: 'is not a field that can be changed' }],
      });
    }
    expect(await events()).toHaveLength(1);
  });
});
