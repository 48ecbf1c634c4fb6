import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { position, RecordedEvent } from '@chronicle/event-store';
import { EsdbEventStore } from '@chronicle/event-store/esdb';
import { MongoCheckpointStore } from '@chronicle/event-store/mongo';
import { MongoReadStore } from '@chronicle/read-models/mongo';
import { EsdbDouble, startEsdbDouble } from '../../../../test/doubles/esdb/esdb-double';
import { MongoDouble, startMongoDouble } from '../../../../test/doubles/mongo/mongo-double';
import { runCli } from '../run-cli';

const NAME = 'Inprocess Copywombat-Zq';

/** `history protect --to` in process: the copy, and what it leaves the processors on the new database. */
describe('history protect --to (in process)', () => {
  let dir: string;
  let mongo: MongoDouble;
  let doubles: EsdbDouble[];
  let env: Record<string, string>;
  let printed: string[];

  beforeAll(async () => {
    [mongo, ...doubles] = await Promise.all([startMongoDouble(), startEsdbDouble(), startEsdbDouble()]);
  });
  afterAll(async () => {
    await Promise.all([mongo, ...doubles].map((double) => double.stop()));
  });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cli-history-'));
    const uri = new URL(mongo.uri);
    uri.pathname = `/history_${randomBytes(4).toString('hex')}`;
    env = {
      DATA_DIR: dir,
      LOG_LEVEL: 'silent',
      EVENTSTORE_URL: doubles[0].connectionString,
      MONGODB_URI: uri.toString(),
      DATA_KEY_SECRET: randomBytes(32).toString('hex'),
    };
    printed = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      printed.push(String(chunk));
      return true;
    });
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      printed.push(String(chunk));
      return true;
    });
  });
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (...argv: string[]) => runCli(argv, env);
  const output = () => JSON.parse(printed.join('')) as Record<string, unknown>;

  it('copies into the new database, restarts the sessions and the saga there, and holds the read models until rebuilt', async () => {
    const userId = randomUUID();
    const source = EsdbEventStore.connect(doubles[0].connectionString);
    await source.append(
      `user-${userId}`,
      [
        {
          id: randomUUID(),
          type: 'UserRegistered.v1',
          data: { userId, accountId: null, name: NAME, age: 50, createdon: '2020-01-01T00:00:00.000Z' },
          metadata: {
            actor: 'system',
            correlationId: 'c',
            causationId: null,
            occurredAt: '2020-01-01T00:00:00.000Z',
          },
        },
      ],
      'no_stream',
    );
    await source.close();
    // What the processors kept of the old database's positions.
    const checkpoints = await MongoCheckpointStore.connect(
      env.MONGODB_URI,
      new URL(env.MONGODB_URI).pathname.slice(1),
    );
    await checkpoints.storeState('account-sessions', position(900), new Map([['a', 1]]));
    await checkpoints.store('saga:password', position(900));
    const readModels = await MongoReadStore.connect(env.MONGODB_URI);
    await readModels.applyBatch([], { projection: 'read-models', position: position(900) });

    try {
      expect(await run('history', 'protect', '--to', doubles[1].connectionString)).toBe(0);

      expect(output()).toMatchObject({ events: 1, erasedSubjectEvents: 0, copied: 1, resumed: 0 });
      const target = EsdbEventStore.connect(doubles[1].connectionString);
      const copied: RecordedEvent[] = [];
      try {
        for await (const event of target.readAll()) copied.push(event);
      } finally {
        await target.close();
      }
      expect(copied.map((event) => event.type)).toEqual(['UserRegistered.v1', 'HistoryProtected.v1']);
      expect(JSON.stringify(copied.map((event) => event.data))).not.toContain(NAME);
      expect(await checkpoints.load('account-sessions')).toBeNull();
      expect(await checkpoints.loadState('account-sessions')).toEqual(new Map());
      expect(await checkpoints.load('saga:password')).toBeNull();
      expect(await readModels.getCheckpoint('read-models')).toEqual({
        commit: 2n ** 63n - 1n,
        prepare: 2n ** 63n - 1n,
      });
    } finally {
      await Promise.all([checkpoints.close(), readModels.close()]);
    }
  });

  it.each([
    ['without --to on EventStoreDB', {}, [], 'not-embedded'],
    [
      '--to on the embedded store',
      { EVENTSTORE_URL: '', MONGODB_URI: '' },
      ['--to', 'esdb://127.0.0.1:1?tls=false'],
      'no-source',
    ],
    ['--to naming the source', {}, ['--to', 'SOURCE'], 'invalid-target'],
    ['--to that is no connection string', {}, ['--to', 'esdb://127.0.0.1:1?tls=maybe'], 'invalid-target'],
  ])('refuses %s', async (_, overrides: Record<string, string>, args: string[], error) => {
    Object.assign(env, overrides);
    const to = args.map((arg) => (arg === 'SOURCE' ? env.EVENTSTORE_URL : arg));

    expect(await run('history', 'protect', ...to)).toBe(1);

    expect(output()).toEqual({ error, message: expect.any(String) });
  });
});
