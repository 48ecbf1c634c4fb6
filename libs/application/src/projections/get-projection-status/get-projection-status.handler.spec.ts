import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  EVENTS_FILE,
  position,
  RecordedEvent,
  SqliteCheckpointStore,
  SqliteEventStore,
} from '@chronicle/event-store';
import { MemoryReadStore, READ_MODELS_CHECKPOINT } from '@chronicle/read-models';
import { passwordSaga } from '../../sagas/password.saga';
import { CommandContext } from '../../shared/command-context';
import { toNewEvent } from '../../shared/event-sourced-repository';
import { FixedClock } from '../../shared/test-doubles.spec-helper';
import {
  GetProjectionStatusHandler,
  LAG_COUNT_CAP,
  projectionsStatus,
} from './get-projection-status.handler';

const NOW = Date.parse('2026-11-27T09:00:00.000Z');
const CONTEXT: CommandContext = {
  actor: 'system',
  correlationId: 'c-status',
  auth: { method: 'system', tokenId: null },
};

describe('projections status', () => {
  let dir: string;
  let store: SqliteEventStore;
  let checkpoints: SqliteCheckpointStore;
  let readStore: MemoryReadStore;
  let clock: FixedClock;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'projection-status-'));
    store = SqliteEventStore.open(dir);
    checkpoints = SqliteCheckpointStore.open(join(dir, EVENTS_FILE));
    readStore = new MemoryReadStore();
    clock = new FixedClock(NOW);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await readStore.close();
    await checkpoints.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Appends events of these types to `stream`, each written `agoMs` before NOW; answers them as recorded. */
  const write = async (stream: string, types: string[], agoMs: number): Promise<RecordedEvent[]> => {
    const before = (await store.readStream(stream)).length;
    await store.append(
      stream,
      types.map((type) => toNewEvent({ type, data: {} }, CONTEXT, new Date(NOW - agoMs))),
      'any',
    );
    return (await store.readStream(stream)).slice(before);
  };
  const readModelsAt = (at: RecordedEvent) =>
    readStore.applyBatch([], { projection: READ_MODELS_CHECKPOINT, position: at.position });
  const status = () => new GetProjectionStatusHandler(store, readStore, checkpoints, clock).execute();

  const caughtUp = { checkpoint: null, lag: 0, lagExact: true, lagSeconds: 0 };

  it('reports an empty store: no head, nothing to process, nothing parked', async () => {
    expect(await status()).toEqual({
      head: null,
      projections: [
        { name: 'customers', ...caughtUp },
        { name: 'users', ...caughtUp },
      ],
      sagas: [{ name: 'saga:password', ...caughtUp }],
      parked: [],
    });
  });

  it("counts each processor's events after its checkpoint, and how long the oldest of them has waited", async () => {
    const [first] = await write('s-1', ['UserRegistered.v2'], 300_000);
    await write('s-2', ['PasswordChanged.v1', 'Other.v1'], 120_000);
    const [last] = await write('s-3', ['PasswordChanged.v1'], 30_000);
    await readModelsAt(first);

    const answered = await status();

    expect(answered.head).toBe(`${last.position.commit}`);
    const projection = { checkpoint: `${first.position.commit}`, lag: 3, lagExact: true, lagSeconds: 120 };
    expect(answered.projections).toEqual([
      { name: 'customers', ...projection },
      { name: 'users', ...projection },
    ]);
    // The saga is fed only the types it handles, from the start: two of the four events.
    expect(answered.sagas).toEqual([
      { name: 'saga:password', checkpoint: null, lag: 2, lagExact: true, lagSeconds: 120 },
    ]);
  });

  it("reads a saga's lag after its own checkpoint", async () => {
    const [changed] = await write('s-1', ['PasswordChanged.v1'], 300_000);
    await write('s-2', ['UserRegistered.v2', 'PasswordChanged.v1'], 90_500);
    await checkpoints.store('saga:password', changed.position);

    expect((await status()).sagas).toEqual([
      {
        name: 'saga:password',
        checkpoint: `${changed.position.commit}`,
        lag: 1,
        lagExact: true,
        lagSeconds: 90.5,
      },
    ]);
  });

  it('reports every processor caught up at the head', async () => {
    const events = await write('s-1', ['PasswordChanged.v1', 'UserRegistered.v2'], 60_000);
    await readModelsAt(events[1]);
    await checkpoints.store('saga:password', events[1].position);

    const answered = await status();

    const at = { checkpoint: `${events[1].position.commit}`, lag: 0, lagExact: true, lagSeconds: 0 };
    expect(answered.projections).toEqual([
      { name: 'customers', ...at },
      { name: 'users', ...at },
    ]);
    expect(answered.sagas).toEqual([{ name: 'saga:password', ...at }]);
  });

  it('reads at most one event past the cap after each checkpoint, only the types a saga handles', async () => {
    const [first] = await write('s-1', ['PasswordChanged.v1'], 60_000);
    await readModelsAt(first);
    const readAll = jest.spyOn(store, 'readAll');

    await status();

    expect(readAll.mock.calls).toStrictEqual([
      [{ limit: LAG_COUNT_CAP + 1, after: first.position }],
      [{ limit: LAG_COUNT_CAP + 1, eventTypes: passwordSaga.eventTypes }],
    ]);
  });

  it('never reports a negative wait, for events written by a clock ahead of this one', async () => {
    await write('s-1', ['PasswordChanged.v1'], -5_000);

    const answered = await status();

    expect(answered.projections[0]).toMatchObject({ lag: 1, lagSeconds: 0 });
    expect(answered.sagas[0]).toMatchObject({ lag: 1, lagSeconds: 0 });
  });

  it(`counts up to ${LAG_COUNT_CAP} events exactly, and says when there are more`, async () => {
    await write(
      's-1',
      Array.from({ length: LAG_COUNT_CAP }, () => 'Other.v1'),
      10_000,
    );

    expect((await status()).projections[0]).toEqual({
      name: 'customers',
      checkpoint: null,
      lag: LAG_COUNT_CAP,
      lagExact: true,
      lagSeconds: 10,
    });

    await write('s-2', ['Other.v1'], 0);

    expect((await status()).projections[0]).toMatchObject({
      lag: LAG_COUNT_CAP,
      lagExact: false,
      lagSeconds: 10,
    });
  });

  it('lists the parked messages, their positions formatted', async () => {
    const [parked] = await write('s-1', ['PasswordChanged.v1'], 60_000);
    await checkpoints.park({
      processor: 'saga:password',
      eventId: parked.id,
      stream: 's-1',
      revision: 0,
      type: 'PasswordChanged.v1',
      position: position(parked.position.commit, 0),
      reason: 'mail server refused',
      attempts: 5,
      parkedAt: '2026-11-27T08:59:30.000Z',
    });

    expect((await status()).parked).toEqual([
      {
        processor: 'saga:password',
        eventId: parked.id,
        stream: 's-1',
        type: 'PasswordChanged.v1',
        position: `${parked.position.commit}:0`,
        reason: 'mail server refused',
        attempts: 5,
        parkedAt: '2026-11-27T08:59:30.000Z',
      },
    ]);
  });

  it('leaves the read models out when they live in another process', async () => {
    await write('s-1', ['PasswordChanged.v1'], 60_000);
    const getCheckpoint = jest.spyOn(readStore, 'getCheckpoint');

    const answered = await projectionsStatus(store, null, checkpoints, clock);

    expect(answered.projections).toEqual([]);
    expect(answered.sagas).toEqual([
      { name: 'saga:password', checkpoint: null, lag: 1, lagExact: true, lagSeconds: 60 },
    ]);
    expect(getCheckpoint).not.toHaveBeenCalled();
  });
});
