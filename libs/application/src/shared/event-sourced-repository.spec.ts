import { randomUUID } from 'node:crypto';
import { AlreadyExistsError, NotFoundError, userDecider, UserState } from '@chronicle/domain';
import { SubjectErasedError } from '@chronicle/event-store';
import { EsdbEventStore } from '@chronicle/event-store/esdb';
import { EsdbDouble, startEsdbDouble } from '../../../../test/doubles/esdb/esdb-double';
import { ConcurrencyConflictError } from './application-errors';
import { SystemClock } from './clock';
import { SYSTEM_AUTH } from './command-context';
import { EventSourcedRepository, toNewEvent } from './event-sourced-repository';
import { registerAda } from './test-doubles.spec-helper';

// A remote store (EventStoreDB, here its gRPC double): reads and appends of concurrent commands
// interleave, unlike the embedded store's synchronous ones.
describe('EventSourcedRepository on a remote event store', () => {
  let double: EsdbDouble;
  let store: EsdbEventStore;
  let repository: EventSourcedRepository;
  const context = { actor: 'system', correlationId: 'repository-spec', auth: SYSTEM_AUTH };

  beforeAll(async () => {
    double = await startEsdbDouble();
    store = EsdbEventStore.connect(double.connectionString);
    repository = new EventSourcedRepository(store, new SystemClock());
  });

  afterAll(async () => {
    await store.close();
    await double.stop();
  });

  const register = async (userId: string = randomUUID()) => {
    await registerAda(repository, userId, context);
    return userId;
  };
  const patchAge = (userId: string, age: number, maxAttempts = 1, ifMatch?: number[]) =>
    repository.handle(
      userDecider,
      `user-${userId}`,
      (_state: UserState, now) => ({ type: 'PatchUser' as const, values: { age }, now: now.toISOString() }),
      context,
      { maxAttempts, ifMatch },
    );

  /** Another process changes the user behind this repository's back. */
  const appendOther = (userId: string, changes: Record<string, unknown>, expected: number) =>
    store.append(
      `user-${userId}`,
      [
        {
          id: randomUUID(),
          type: 'UserPatched.v1',
          data: { userId, changes, modifiedon: new Date().toISOString() },
          metadata: {
            actor: 'other',
            correlationId: 'other',
            causationId: null,
            occurredAt: new Date().toISOString(),
          },
        },
      ],
      expected,
    );

  it('runs concurrent commands on one stream in turn, so none conflicts', async () => {
    const userId = await register();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => patchAge(userId, 40 + i)));
    expect(results.map((result) => result.revision)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect((await store.readStream(`user-${userId}`)).map((event) => event.data.changes)).toEqual([
      undefined,
      ...Array.from({ length: 10 }, (_, i) => ({ age: 40 + i })),
    ]);
  });

  it('lets the next command run when one before it fails', async () => {
    const userId = await register();
    const missing = randomUUID();
    const [failed, applied] = await Promise.allSettled([patchAge(missing, 50), patchAge(userId, 51)]);
    expect(failed).toMatchObject({ status: 'rejected', reason: expect.any(NotFoundError) });
    expect(applied).toMatchObject({ status: 'fulfilled', value: { revision: 1 } });
    const [second, third] = await Promise.allSettled([patchAge(missing, 52), patchAge(missing, 53)]);
    expect([second.status, third.status]).toEqual(['rejected', 'rejected']);
  });

  it('still retries a conflict with a writer outside this process, and gives up after maxAttempts', async () => {
    const userId = await register();
    const stream = `user-${userId}`;
    // Another process appends between this one's read and its append, every time.
    const append = store.append.bind(store);
    let interfere = 2;
    const spy = jest.spyOn(store, 'append').mockImplementation(async (name, events, expected) => {
      if (name === stream && interfere-- > 0) {
        const [current] = (await store.readStream(stream)).slice(-1);
        const theirs = { ...events[0], id: randomUUID(), data: { ...events[0].data, changes: { age: 99 } } };
        await append(name, [theirs], current.revision);
      }
      return append(name, events, expected);
    });
    try {
      expect((await patchAge(userId, 60, 3)).revision).toBe(3);
      interfere = 5;
      await expect(patchAge(userId, 61, 2)).rejects.toBeInstanceOf(ConcurrencyConflictError);
    } finally {
      spy.mockRestore();
    }
  });

  it('keeps folded states: a load reads only the events after the kept revision', async () => {
    const userId = await register();
    await patchAge(userId, 41);
    const reads = jest.spyOn(store, 'readStream');
    try {
      const loaded = await repository.load(userDecider, `user-${userId}`);
      expect(loaded).toMatchObject({ revision: 1, state: { exists: true, age: 41, name: 'Ada' } });
      expect(reads.mock.calls).toEqual([[`user-${userId}`, { fromRevision: 2 }]]);
    } finally {
      reads.mockRestore();
    }
  });

  it('decides on the kept state without reading the stream, when this process wrote it last', async () => {
    const userId = await register();
    await patchAge(userId, 41);
    const reads = jest.spyOn(store, 'readStream');
    try {
      const result = await patchAge(userId, 42);
      expect(result.revision).toBe(2);
      expect(result.state).toMatchObject({ exists: true, age: 42, name: 'Ada' });
      expect(reads).not.toHaveBeenCalled();
      // Appended at the kept revision: the stream has each patch once, in order.
      expect((await store.readStream(`user-${userId}`)).map((event) => event.data.changes)).toEqual([
        undefined,
        { age: 41 },
        { age: 42 },
      ]);
    } finally {
      reads.mockRestore();
    }
  });

  it('reads the stream before saying that nothing changed: the kept state may be behind it', async () => {
    const userId = await register();
    await patchAge(userId, 41);
    await appendOther(userId, { age: 70 }, 1);
    // Nothing to change on the kept state (age 41); on the stream, 70 becomes 41 again.
    const result = await patchAge(userId, 41);
    expect(result.revision).toBe(3);
    expect(result.events).toHaveLength(1);
    expect(result.state).toMatchObject({ age: 41 });
  });

  it('reads the stream before refusing a command: a refusal is never answered from the kept state', async () => {
    const userId = await register();
    const reads = jest.spyOn(store, 'readStream');
    try {
      await expect(register(userId)).rejects.toBeInstanceOf(AlreadyExistsError);
      expect(reads).toHaveBeenCalledTimes(1);
    } finally {
      reads.mockRestore();
    }
  });

  it('reads the stream before a 412: If-Match may name a revision newer than the kept one', async () => {
    const userId = await register();
    await patchAge(userId, 41);
    await appendOther(userId, { name: 'Grace' }, 1);
    const result = await patchAge(userId, 44, 1, [2]);
    expect(result).toMatchObject({ revision: 3, state: { name: 'Grace', age: 44 } });
    await expect(patchAge(userId, 45, 1, [2])).rejects.toMatchObject({ currentRevision: 3 });
  });

  it('reads the stream again when the append on the kept state is refused for an erased subject', async () => {
    const userId = await register();
    await patchAge(userId, 41);
    const append = jest.spyOn(store, 'append').mockRejectedValueOnce(
      new SubjectErasedError({
        subject: { kind: 'user', id: userId },
        erasedAt: new Date().toISOString(),
      }),
    );
    const reads = jest.spyOn(store, 'readStream');
    try {
      // Here the stream has no erasure yet, so the decision on it is appended.
      expect((await patchAge(userId, 46)).revision).toBe(2);
      expect(append).toHaveBeenCalledTimes(2);
      expect(reads).toHaveBeenCalledTimes(1);
    } finally {
      append.mockRestore();
      reads.mockRestore();
    }
  });

  it("folds in another writer's appends made after the state was kept", async () => {
    const userId = await register();
    await patchAge(userId, 41);
    // Another process renames the user behind this repository's back.
    await store.append(
      `user-${userId}`,
      [
        {
          id: randomUUID(),
          type: 'UserPatched.v1',
          data: { userId, changes: { name: 'Grace' }, modifiedon: new Date().toISOString() },
          metadata: {
            actor: 'other',
            correlationId: 'other',
            causationId: null,
            occurredAt: new Date().toISOString(),
          },
        },
      ],
      1,
    );

    const result = await patchAge(userId, 43);
    expect(result.revision).toBe(3);
    expect(result.state).toMatchObject({ name: 'Grace', age: 43 });
    // A patch that changes nothing still sees the other writer's name.
    expect((await repository.load(userDecider, `user-${userId}`)).state).toMatchObject({ name: 'Grace' });
  });

  it('refuses to decide over a stream holding an event type this build does not know, naming it', async () => {
    const userId = await register();
    await store.append(
      `user-${userId}`,
      [
        {
          id: randomUUID(),
          type: 'UserArchived.v1',
          data: { userId },
          metadata: {
            actor: 'newer',
            correlationId: 'c',
            causationId: null,
            occurredAt: new Date().toISOString(),
          },
        },
      ],
      'any',
    );
    await expect(patchAge(userId, 50)).rejects.toThrow(
      expect.objectContaining({
        name: 'UnknownEventTypeError',
        type: 'UserArchived.v1',
        stream: `user-${userId}`,
        message: expect.stringMatching(
          /^UserArchived\.v1 is not an event type this build knows .*; found at position \S+ in user-/,
        ),
      }),
    );
    expect(await store.readStream(`user-${userId}`)).toHaveLength(2);
  });
});

describe('toNewEvent', () => {
  it('gives each event an id that sorts by the time it was made: the store indexes event ids', async () => {
    const context = { actor: 'a-1', correlationId: 'c-1', auth: SYSTEM_AUTH };
    const made = (age: number) =>
      toNewEvent(
        { type: 'UserPatched.v1', data: { userId: 'u-1', changes: { age }, modifiedon: 'x' } },
        context,
        new Date(),
      ).id;
    const ids: string[] = [];
    for (let age = 0; age < 3; age++) {
      ids.push(made(age));
      // A millisecond apart: ids made within one sort in no particular order.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect(new Set(ids).size).toBe(3);
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
