import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErasedError, NotFoundError, userDecider, userStreamName } from '@chronicle/domain';
import { position, RecordedEvent, SqliteEventStore } from '@chronicle/event-store';
import { CommandContext } from '../../shared/command-context';
import { EventSourcedRepository, toNewEvent } from '../../shared/event-sourced-repository';
import { FixedClock } from '../../shared/test-doubles.spec-helper';
import { GetUserAsOfQuery } from './get-user-as-of.query';
import { GetUserAsOfHandler, userAsOf } from './get-user-as-of.handler';

const NOW = Date.parse('2026-11-27T09:00:00.000Z');
const MINUTE = 60_000;
const CONTEXT: CommandContext = {
  actor: 'a-1',
  correlationId: 'c-as-of',
  auth: { method: 'basic', tokenId: null },
};

describe('users as of a moment', () => {
  let dir: string;
  let store: SqliteEventStore;
  let clock: FixedClock;
  let repository: EventSourcedRepository;
  /** The user stream's events, as recorded: ada's registration, then her two birthdays. */
  let history: RecordedEvent[];

  const registered = {
    id: 'ada',
    name: 'Ada Lovelace',
    age: 36,
    createdon: '2026-11-27T09:00:00.000Z',
    modifiedon: '2026-11-27T09:00:00.000Z',
    revision: 0,
  };
  const first = { ...registered, age: 37, modifiedon: '2026-11-27T09:01:00.000Z', revision: 1 };
  const second = { ...registered, age: 38, modifiedon: '2026-11-27T09:02:00.000Z', revision: 2 };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'user-as-of-'));
    store = SqliteEventStore.open(dir);
    clock = new FixedClock(NOW);
    repository = new EventSourcedRepository(store, clock);
    // Another stream's events before and between, so that positions are not revisions.
    const other = () =>
      store.append('other', [toNewEvent({ type: 'Other.v1', data: {} }, CONTEXT, new Date(NOW))], 'any');
    await other();
    await repository.handle(
      userDecider,
      userStreamName('ada'),
      (_state, now) => ({
        type: 'RegisterUser' as const,
        userId: 'ada',
        accountId: null,
        fields: { name: 'Ada Lovelace', age: 36 },
        now: now.toISOString(),
      }),
      CONTEXT,
    );
    for (const age of [37, 38]) {
      await other();
      clock.time += MINUTE;
      await repository.handle(
        userDecider,
        userStreamName('ada'),
        (_state, now) => ({ type: 'PatchUser' as const, values: { age }, now: now.toISOString() }),
        CONTEXT,
      );
    }
    history = await store.readStream(userStreamName('ada'));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const erase = () =>
    store.append(
      userStreamName('ada'),
      [
        toNewEvent(
          {
            type: 'SubjectErased.v1',
            data: { subject: 'user-ada', kind: 'user', erasedAt: '2026-11-27T10:00:00.000Z' },
          },
          CONTEXT,
          new Date(NOW),
        ),
      ],
      2,
    );

  describe('userAsOf', () => {
    it('folds the whole stream without a moment', async () => {
      expect(await userAsOf(store, 'ada')).toEqual(second);
    });

    it('folds the events up to a position, that position included', async () => {
      const [, atFirst, atSecond] = history.map((event) => event.position);

      expect(await userAsOf(store, 'ada', { position: atFirst })).toEqual(first);
      expect(await userAsOf(store, 'ada', { position: atSecond })).toEqual(second);
      expect(await userAsOf(store, 'ada', { position: position(atFirst.commit + 1n) })).toEqual(first);
      expect(await userAsOf(store, 'ada', { position: position(10_000) })).toEqual(second);
    });

    it('finds no user before its registration', async () => {
      expect(
        await userAsOf(store, 'ada', { position: position(history[0].position.commit - 1n) }),
      ).toBeNull();
      expect(await userAsOf(store, 'ada', { at: new Date(NOW - 1) })).toBeNull();
    });

    it('answers at a time the last version modified at or before it', async () => {
      expect(await userAsOf(store, 'ada', { at: new Date(NOW) })).toEqual(registered);
      expect(await userAsOf(store, 'ada', { at: new Date(NOW + MINUTE - 1) })).toEqual(registered);
      expect(await userAsOf(store, 'ada', { at: new Date(NOW + MINUTE) })).toEqual(first);
      expect(await userAsOf(store, 'ada', { at: new Date(NOW + 2 * MINUTE - 1) })).toEqual(first);
      expect(await userAsOf(store, 'ada', { at: new Date(NOW + 3 * MINUTE) })).toEqual(second);
    });

    it('finds no user whose stream does not exist', async () => {
      expect(await userAsOf(store, 'grace')).toBeNull();
      expect(await userAsOf(store, 'grace', { at: new Date(NOW) })).toBeNull();
    });

    it.each([
      ['now', undefined],
      ['at a time before the erasure', { at: new Date(NOW + MINUTE) }],
      ['at a position before the erasure', { position: position(3) }],
    ])('refuses an erased user as gone, %s too', async (_case, asOf) => {
      await erase();

      await expect(userAsOf(store, 'ada', asOf)).rejects.toMatchObject({
        constructor: ErasedError,
        message: 'User was erased',
        erasedAt: '2026-11-27T10:00:00.000Z',
      });
    });
  });

  describe('GetUserAsOfHandler', () => {
    const get = (userId: string, asOf?: GetUserAsOfQuery['asOf']) =>
      new GetUserAsOfHandler(store).execute(new GetUserAsOfQuery(userId, asOf));

    it('answers the user as it was then, or as it is', async () => {
      expect(await get('ada', { at: new Date(NOW + MINUTE) })).toEqual(first);
      expect(await get('ada')).toEqual(second);
    });

    it('refuses a user that did not exist then', async () => {
      await expect(get('ada', { at: new Date(NOW - 1) })).rejects.toThrow(NotFoundError);
      await expect(get('grace')).rejects.toThrow(NotFoundError);
      await expect(get('grace')).rejects.toThrow('User not found');
    });
  });
});
