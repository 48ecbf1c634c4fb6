import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Decider, DomainEvent, userDecider, UserState } from '@chronicle/domain';
import { EventStore, RecordedEvent, SqliteEventStore } from '@chronicle/event-store';
import { ConcurrencyConflictError, PreconditionFailedError } from './application-errors';
import { SYSTEM_AUTH } from './command-context';
import { EventSourcedRepository, FOLDED_STREAMS, toNewEvent } from './event-sourced-repository';
import { FixedClock, registerAda } from './test-doubles.spec-helper';

const context = { actor: 'a-1', correlationId: 'c-1', auth: SYSTEM_AUTH };
const clock = new FixedClock(Date.parse('2026-11-27T09:00:00.000Z'));

describe('EventSourcedRepository: If-Match and conflicts, on the embedded store', () => {
  let dir: string;
  let store: SqliteEventStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'repository-'));
    store = SqliteEventStore.open(dir);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const register = (repository: EventSourcedRepository, userId: string, options = {}) =>
    registerAda(repository, userId, context, options);
  const patchAge = (repository: EventSourcedRepository, userId: string, age: number, options = {}) =>
    repository.handle(
      userDecider,
      `user-${userId}`,
      (_state: UserState, now) => ({ type: 'PatchUser' as const, values: { age }, now: now.toISOString() }),
      context,
      options,
    );
  /** Another process appends to `stream` before each of this one's appends; answers this one's attempts. */
  const interfereWith = (stream: string) => {
    const append = store.append.bind(store);
    let attempts = 0;
    jest.spyOn(store, 'append').mockImplementation(async (name, events, expected) => {
      if (name === stream) {
        attempts += 1;
        const theirs = { ...events[0], id: randomUUID(), data: { ...events[0].data, changes: { age: 99 } } };
        await append(name, [theirs], 'any');
      }
      return append(name, events, expected);
    });
    return () => attempts;
  };

  it('given If-Match on a stream that does not exist, answers 412 with no revision and writes nothing', async () => {
    const repository = new EventSourcedRepository(store, clock);
    const userId = randomUUID();
    await expect(register(repository, userId, { ifMatch: [0] })).rejects.toEqual(
      new PreconditionFailedError(null),
    );
    await expect(register(repository, userId, { ifMatch: [0] })).rejects.toMatchObject({
      currentRevision: null,
    });
    expect(await store.readStream(`user-${userId}`)).toEqual([]);
  });

  it('given If-Match met when read, answers 412 with the revision another writer reached first, after one attempt', async () => {
    const userId = randomUUID();
    await register(new EventSourcedRepository(store, clock), userId);
    const attempts = interfereWith(`user-${userId}`);
    const repository = new EventSourcedRepository(store, clock);
    await expect(patchAge(repository, userId, 41, { ifMatch: [0], maxAttempts: 5 })).rejects.toMatchObject({
      name: 'PreconditionFailedError',
      currentRevision: 1,
    });
    expect(attempts()).toBe(1);
  });

  it('given If-Match met, appends at that revision', async () => {
    const userId = randomUUID();
    const repository = new EventSourcedRepository(store, clock);
    await register(repository, userId);
    const result = await patchAge(new EventSourcedRepository(store, clock), userId, 41, { ifMatch: [3, 0] });
    expect(result).toMatchObject({ revision: 1, state: { age: 41 } });
  });

  it('gives up after exactly maxAttempts conflicts with another writer', async () => {
    const userId = randomUUID();
    await register(new EventSourcedRepository(store, clock), userId);
    const attempts = interfereWith(`user-${userId}`);
    const repository = new EventSourcedRepository(store, clock);
    await expect(patchAge(repository, userId, 41, { maxAttempts: 3 })).rejects.toEqual(
      new ConcurrencyConflictError(`user-${userId}`),
    );
    expect(attempts()).toBe(3);
  });

  it('decides on a kept state only with the decider that kept it', async () => {
    const userId = randomUUID();
    const repository = new EventSourcedRepository(store, clock);
    await register(repository, userId);
    // Another decider on the same stream: its state is the last event's type, and it records
    // each state it is asked to decide on.
    const seen: string[] = [];
    const probe: Decider<string, { type: 'Look' }, DomainEvent> = {
      initialState: 'none',
      evolve: (_state, event) => event.type,
      decide: (_command, state) => {
        seen.push(state);
        return [];
      },
    };
    await repository.handle(probe, `user-${userId}`, () => ({ type: 'Look' as const }), context);
    expect(seen).toEqual(['UserRegistered.v2']);
  });

  it('passes on an append that fails for another reason than a conflict, without reading or trying again', async () => {
    const userId = randomUUID();
    const repository = new EventSourcedRepository(store, clock);
    await register(repository, userId);
    const failure = new Error('disk I/O error');
    const append = jest.spyOn(store, 'append').mockRejectedValueOnce(failure);
    const reads = jest.spyOn(store, 'readStream');
    await expect(patchAge(repository, userId, 41)).rejects.toBe(failure);
    expect(append).toHaveBeenCalledTimes(1);
    expect(reads).not.toHaveBeenCalled();
  });

  it('never steps a kept state back: a load that read before a newer append leaves the newer state kept', async () => {
    const userId = randomUUID();
    const repository = new EventSourcedRepository(store, clock);
    await register(repository, userId);
    const read = store.readStream.bind(store);
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const reads = jest.spyOn(store, 'readStream').mockImplementationOnce(async (stream, options) => {
      // Read before the patch below appends, answered after it.
      const events = await read(stream, options);
      await answered;
      return events;
    });
    const slowLoad = repository.load(userDecider, `user-${userId}`);
    await patchAge(repository, userId, 41);
    answer();
    expect(await slowLoad).toMatchObject({ revision: 0, state: { age: 30 } });

    // The patch's state (revision 1) is still the one kept: the next command decides on it.
    const append = jest.spyOn(store, 'append');
    const readsBefore = reads.mock.calls.length;
    expect(await patchAge(repository, userId, 42)).toMatchObject({ revision: 2, state: { age: 42 } });
    expect(reads.mock.calls.length).toBe(readsBefore);
    expect(append).toHaveBeenCalledTimes(1);
    expect(append.mock.calls[0][2]).toBe(1);
  });

  it('appends nothing, and answers no position, when the command changes nothing', async () => {
    const userId = randomUUID();
    const repository = new EventSourcedRepository(store, clock);
    await register(repository, userId);
    const append = jest.spyOn(store, 'append');
    const result = await patchAge(new EventSourcedRepository(store, clock), userId, 30);
    expect(result).toMatchObject({ events: [], position: null, revision: 0 });
    expect(append).not.toHaveBeenCalled();
  });
});

describe('EventSourcedRepository: the folded states it keeps', () => {
  /** Every stream holds one event; reads are recorded. */
  const reads: Array<[string, { fromRevision?: number }]> = [];
  const store = {
    readStream: (stream: string, options: { fromRevision?: number } = {}) => {
      reads.push([stream, options]);
      const event = { stream, revision: 0, type: 'UserPatched.v1', data: {} } as unknown as RecordedEvent;
      return Promise.resolve((options.fromRevision ?? 0) === 0 ? [event] : []);
    },
  } as unknown as EventStore;
  const counter: Decider<number, never, never> = {
    initialState: 0,
    decide: () => [],
    evolve: (state) => state + 1,
  };
  const readOf = async (repository: EventSourcedRepository, stream: string) => {
    reads.length = 0;
    await repository.load(counter, stream);
    return reads[0][1];
  };

  it(`keeps the ${FOLDED_STREAMS} streams used last, and forgets the one used least recently`, async () => {
    const repository = new EventSourcedRepository(store, clock);
    for (let i = 0; i < FOLDED_STREAMS; i++) await repository.load(counter, `s-${i}`);
    // s-0 is used again: s-1 is now the least recently used.
    expect(await readOf(repository, 's-0')).toEqual({ fromRevision: 1 });
    await repository.load(counter, 'one-more');
    expect(await readOf(repository, 's-0')).toEqual({ fromRevision: 1 });
    expect(await readOf(repository, 's-2')).toEqual({ fromRevision: 1 });
    expect(await readOf(repository, 's-1')).toEqual({});
    expect((await repository.load(counter, 's-1')).state).toBe(1);
  });

  it('reads a stream whole for another decider than the one whose state it kept', async () => {
    const repository = new EventSourcedRepository(store, clock);
    await repository.load(counter, 's-0');
    const other: Decider<number, never, never> = { ...counter };
    expect(await readOf(repository, 's-0')).toEqual({ fromRevision: 1 });
    reads.length = 0;
    expect((await repository.load(other, 's-0')).state).toBe(1);
    expect(reads[0][1]).toEqual({});
  });
});

describe('toNewEvent', () => {
  const event = { type: 'UserPatched.v1', data: { userId: 'u-1', changes: { age: 1 }, modifiedon: 'x' } };
  const now = new Date('2026-11-27T09:00:00.000Z');

  it('records who wrote it, within which request, how they authenticated and when', () => {
    expect(toNewEvent(event, context, now)).toEqual({
      id: expect.any(String),
      type: 'UserPatched.v1',
      data: event.data,
      metadata: {
        actor: 'a-1',
        correlationId: 'c-1',
        auth: SYSTEM_AUTH,
        causationId: null,
        occurredAt: '2026-11-27T09:00:00.000Z',
      },
    });
  });

  it("records the client's request id and the cause, when there are", () => {
    const metadata = toNewEvent(
      event,
      { ...context, clientRequestId: 'r-7', causationId: 'e-1' },
      now,
    ).metadata;
    expect(metadata).toMatchObject({ clientRequestId: 'r-7', causationId: 'e-1' });
    expect(toNewEvent(event, { ...context, clientRequestId: null }, now).metadata).not.toHaveProperty(
      'clientRequestId',
    );
  });
});
