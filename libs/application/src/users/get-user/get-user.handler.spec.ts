import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErasedError, NotFoundError, Role, userDecider, userStreamName } from '@chronicle/domain';
import { position, SqliteEventStore } from '@chronicle/event-store';
import { MemoryReadStore, UserDocument } from '@chronicle/read-models';
import { ForbiddenError } from '../../shared/application-errors';
import { CommandContext } from '../../shared/command-context';
import { EventSourcedRepository, toNewEvent } from '../../shared/event-sourced-repository';
import { Principal } from '../../shared/principal';
import { FixedClock, registerAda } from '../../shared/test-doubles.spec-helper';
import { GetUserQuery } from './get-user.query';
import { checkUserAccess, GetUserHandler } from './get-user.handler';

const NOW = Date.parse('2026-11-27T09:00:00.000Z');
const CONTEXT: CommandContext = {
  actor: 'a-1',
  correlationId: 'c-user',
  auth: { method: 'basic', tokenId: null },
};

const principal = (userId: string, ...roles: Role[]): Principal => ({
  accountId: `account-of-${userId}`,
  userId,
  roles,
  method: 'bearer',
  credentialsVersion: 0,
});
const AT = { at: new Date(NOW) };

describe('checkUserAccess', () => {
  it.each([
    ['an admin, any user', principal('u-9', 'admin'), 'u-1', undefined],
    ['an admin, any user as it was', principal('u-9', 'admin'), 'u-1', AT],
    ['a user, its own', principal('u-1', 'user'), 'u-1', undefined],
    ['an auditor, any user as it was', principal('u-9', 'auditor'), 'u-1', AT],
  ])('lets %s be read', (_case, who, userId, asOf) => {
    expect(() => checkUserAccess(who, userId, asOf)).not.toThrow();
  });

  it.each([
    ['a user, another user', principal('u-9', 'user'), 'u-1'],
    ['an auditor, a user as it is', principal('u-9', 'auditor'), 'u-1'],
    ['an account with no user role, its own user', principal('u-1'), 'u-1'],
  ])('refuses %s', (_case, who, userId) => {
    expect(() => checkUserAccess(who, userId, undefined)).toThrow(
      new ForbiddenError('You may read only your own user'),
    );
  });

  it('refuses past states to anyone but administrators and auditors, even of their own user', () => {
    expect(() => checkUserAccess(principal('u-1', 'user'), 'u-1', AT)).toThrow(
      new ForbiddenError('Only administrators and auditors read users as they were'),
    );
  });
});

describe('GetUserHandler', () => {
  let dir: string;
  let store: SqliteEventStore;
  let readStore: MemoryReadStore;
  let clock: FixedClock;
  let repository: EventSourcedRepository;
  let handler: GetUserHandler;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'get-user-'));
    store = SqliteEventStore.open(dir);
    readStore = new MemoryReadStore();
    clock = new FixedClock(NOW);
    repository = new EventSourcedRepository(store, clock);
    handler = new GetUserHandler(readStore, store);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await readStore.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const register = (userId: string) =>
    registerAda(repository, userId, CONTEXT, {}, { name: 'Ada Lovelace', age: 36 });
  const patch = (userId: string, age: number) =>
    repository.handle(
      userDecider,
      userStreamName(userId),
      (_state, now) => ({ type: 'PatchUser' as const, values: { age }, now: now.toISOString() }),
      CONTEXT,
    );
  /** The read model's document, as the projector would have stored it. */
  const stored = (doc: Partial<UserDocument> & { id: string }) =>
    readStore.applyBatch([{ collection: 'users', id: doc.id, position: position(1), set: doc }], {
      projection: 'read-models',
      position: position(1),
    });
  const get = (userId: string, who = principal(userId, 'user'), asOf?: GetUserQuery['asOf']) =>
    handler.execute(new GetUserQuery(userId, who, asOf));

  const registered = {
    id: 'u-1',
    name: 'Ada Lovelace',
    age: 36,
    createdon: '2026-11-27T09:00:00.000Z',
    modifiedon: '2026-11-27T09:00:00.000Z',
    revision: 0,
  };

  it("answers the read model's document when the stream has nothing after it", async () => {
    await register('u-1');
    // The document says something the stream does not: it is what is answered.
    await stored({ ...registered, name: 'From the read model' });
    const reads = jest.spyOn(store, 'readStream');

    expect(await get('u-1')).toEqual({ ...registered, name: 'From the read model' });
    expect(reads.mock.calls).toEqual([['user-u-1', { fromRevision: 1 }]]);
  });

  it('folds in the events the read model has not applied yet', async () => {
    await register('u-1');
    await stored(registered);
    clock.time = NOW + 60_000;
    await patch('u-1', 37);

    expect(await get('u-1')).toEqual({
      ...registered,
      age: 37,
      modifiedon: '2026-11-27T09:01:00.000Z',
      revision: 1,
    });
  });

  it('folds the whole stream when the read model has no document yet', async () => {
    await register('u-1');
    const reads = jest.spyOn(store, 'readStream');

    expect(await get('u-1')).toEqual(registered);
    expect(reads.mock.calls).toEqual([['user-u-1', { fromRevision: 0 }]]);
  });

  it('rebuilds from the stream a document written before documents carried their revision', async () => {
    await register('u-1');
    const { revision: _revision, ...old } = registered;
    await stored({ ...old, name: 'An old document' });
    const reads = jest.spyOn(store, 'readStream');

    expect(await get('u-1')).toEqual(registered);
    expect(reads.mock.calls).toEqual([['user-u-1', { fromRevision: 0 }]]);
  });

  it('refuses a user that does not exist', async () => {
    await expect(get('u-2')).rejects.toThrow(new NotFoundError('User'));
    await expect(get('u-2')).rejects.toThrow('User not found');
  });

  it('refuses a user erased after the read model last saw it, as gone', async () => {
    await register('u-1');
    await stored(registered);
    await store.append(
      userStreamName('u-1'),
      [
        toNewEvent(
          {
            type: 'SubjectErased.v1',
            data: { subject: 'user-u-1', kind: 'user', erasedAt: '2026-11-27T10:00:00.000Z' },
          },
          CONTEXT,
          new Date(NOW),
        ),
      ],
      0,
    );

    await expect(get('u-1')).rejects.toMatchObject({
      constructor: ErasedError,
      message: 'User was erased',
      erasedAt: '2026-11-27T10:00:00.000Z',
    });
  });

  it('reads nothing for a caller who may not read the user', async () => {
    await register('u-1');
    const getUser = jest.spyOn(readStore, 'getUser');
    const reads = jest.spyOn(store, 'readStream');

    await expect(get('u-1', principal('u-2', 'user'))).rejects.toThrow(ForbiddenError);
    await expect(get('u-1', principal('u-1', 'user'), AT)).rejects.toThrow(ForbiddenError);

    expect(getUser).not.toHaveBeenCalled();
    expect(reads).not.toHaveBeenCalled();
  });

  it('answers a past state from the stream alone, for an auditor', async () => {
    await register('u-1');
    await stored({ ...registered, name: 'From the read model' });
    clock.time = NOW + 60_000;
    await patch('u-1', 37);
    const getUser = jest.spyOn(readStore, 'getUser');

    expect(await get('u-1', principal('u-9', 'auditor'), { at: new Date(NOW + 59_999) })).toEqual(registered);
    await expect(get('u-1', principal('u-9', 'auditor'), { at: new Date(NOW - 1) })).rejects.toThrow(
      NotFoundError,
    );
    expect(getUser).not.toHaveBeenCalled();
  });
});
