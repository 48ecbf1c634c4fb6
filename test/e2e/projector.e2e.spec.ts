import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Document } from 'bson';
import { Db, MongoClient } from 'mongodb';
import { passwordSaga } from '@chronicle/application';
import { parseConfig } from '@chronicle/config';
import {
  decideCustomer,
  decideUser,
  DomainEvent,
  evolveUser,
  initialCustomerState,
  initialUserState,
  UserState,
} from '@chronicle/domain';
import {
  EventStore,
  NewEvent,
  openEventStore,
  Position,
  positionKey,
  SqliteCheckpointStore,
} from '@chronicle/event-store';
import { MongoCheckpointStore } from '@chronicle/event-store/mongo';
import {
  ALL_PROJECTIONS,
  ProjectionProcessor,
  READ_MODELS_CHECKPOINT,
  ReadModelRebuilder,
} from '@chronicle/read-models';
import { MongoReadStore, MongoRebuildTarget } from '@chronicle/read-models/mongo';
import { EsdbDouble, startEsdbDouble } from '../doubles/esdb/esdb-double';
import { MongoDouble, startMongoDouble } from '../doubles/mongo/mongo-double';
import { freePort } from '../support/free-port';
import { describeExit, AppProcess, startProjector } from '../support/app-process';
import { scrape, valueOf } from './support/scrape';
import { E2E_BACKEND, newDataDir } from './support/test-app';

// The projector process on the doubles: what the production shape adds to the embedded default.
const describeOnDoubles = E2E_BACKEND === 'doubles' ? describe : describe.skip;

jest.setTimeout(150_000);

// A takeover waits this out, so short; but a projector whose renewal misses it exits (code 75),
// and its renewals are answered by the MongoDB double in this busy jest worker. At 3 s, on 2 busy
// cores, a successor missed one mid-replay and exited: its checkpoint stopped short (CI, 2026-11-28).
const LEASE_TTL_SECONDS = 10;
/** The deployment's: the test's own store and the projectors read one key store. */
const DATA_KEY_SECRET = randomBytes(32).toString('hex');
/** The projectors the running test started: stopped after it, and their output shown when it fails. */
let projectors: AppProcess[] = [];

const SILENT = { log: () => undefined, warn: () => undefined, error: () => undefined };

describeOnDoubles('the projector process', () => {
  let mongo: MongoDouble;
  let client: MongoClient;
  /** Sees every command the MongoDB double receives; throwing drops the connection unanswered. */
  let onMongoCommand: ((db: string, command: Document) => void) | null = null;
  let esdb: EsdbDouble;
  let store: EventStore;
  let dataDir: string;
  let database: string;

  beforeAll(async () => {
    mongo = await startMongoDouble({ onCommand: (db, command) => onMongoCommand?.(db, command) });
    client = await MongoClient.connect(mongo.uri);
  });

  afterAll(async () => {
    await client.close();
    await mongo.stop();
  });

  beforeEach(async () => {
    esdb = await startEsdbDouble();
    dataDir = newDataDir();
    database = `projector_${randomUUID().replaceAll('-', '')}`;
    store = await openTestStore();
    projectors = [];
  });

  afterEach(async () => {
    onMongoCommand = null;
    await Promise.all(projectors.map((projector) => projector.stop()));
    await store.close();
    await esdb.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const mongoUri = (name = database) => {
    const uri = new URL(mongo.uri);
    uri.pathname = `/${name}`;
    return uri.toString();
  };

  /** The deployment's event store, its data keys where the projector finds them. */
  const openTestStore = () =>
    openEventStore(
      parseConfig({
        DATA_DIR: dataDir,
        EVENTSTORE_URL: esdb.connectionString,
        MONGODB_URI: mongoUri(),
        DATA_KEY_SECRET,
      }),
    );

  const projector = () => {
    const started = startProjector({
      DATA_DIR: dataDir,
      EVENTSTORE_URL: esdb.connectionString,
      MONGODB_URI: mongoUri(),
      DATA_KEY_SECRET,
      PROJECTOR_LEASE_TTL: String(LEASE_TTL_SECONDS),
    });
    projectors.push(started);
    return started;
  };

  it('killed between a batch and its checkpoint, resumes to the read models of a clean replay', async () => {
    await writeHistory(store, { customers: 1500, users: 40, patchesPerUser: 25 });
    const victim = projector();
    let checkpointWrites = 0;
    let killed = false;
    onMongoCommand = (db, command) => {
      if (db !== database || command.update !== 'checkpoints') return;
      const updates = command.updates as { q?: { _id?: unknown } }[] | undefined;
      if (updates?.[0]?.q?._id !== READ_MODELS_CHECKPOINT) return;
      if (!killed && ++checkpointWrites === 2) {
        // The batch's documents are written; its checkpoint never will be.
        process.kill(victim.pid, 'SIGKILL');
        killed = true;
      }
      if (killed && victim.exit() === null) throw new Error('the projector died before this write');
    };
    expect((await victim.exited).signal).toBe('SIGKILL');
    onMongoCommand = null;

    const db = client.db(database);
    const checkpoint = await checkpointOf(db);
    expect(checkpoint).not.toBeNull();
    const past = { pos: { $gt: positionKey(checkpoint!) } };
    const ahead =
      (await db.collection('customers').countDocuments(past)) +
      (await db.collection('users').countDocuments(past));
    expect(ahead).toBeGreaterThan(0);

    const successor = projector();
    await successor.waitForOutput(new RegExp(`Took over the projector lease from [^ ]+:${victim.pid}:`));
    await waitForCheckpoint(db, (await store.headPosition())!);
    // And it follows live events after the replay.
    await writeHistory(store, { customers: 20, users: 3, patchesPerUser: 4 });
    await waitForCheckpoint(db, (await store.headPosition())!);

    expect(await snapshot(db)).toEqual(await cleanReplay());
  });

  it('runs one at a time: a second projector waits for the lease and takes over on shutdown', async () => {
    await writeHistory(store, { customers: 300, users: 10, patchesPerUser: 5 });
    const db = client.db(database);
    const first = projector();
    await first.waitForOutput(/Acquired the projector lease/);
    await waitForCheckpoint(db, (await store.headPosition())!);

    const second = projector();
    await second.waitForOutput(
      new RegExp(
        `Another projector \\([^ ]+:${first.pid}:[^ ]+\\) holds the projector lease: this one \\([^ ]+:${second.pid}:`,
      ),
    );
    await writeHistory(store, { customers: 50, users: 5, patchesPerUser: 5 });
    await waitForCheckpoint(db, (await store.headPosition())!);
    expect((await db.collection('leases').findOne({ _id: 'projector' as never }))?.owner).toContain(
      `:${first.pid}:`,
    );
    // The waiting one has not projected anything: its runner never started.
    expect(second.output()).not.toMatch(/Caught up/);
    // One stopped while it waits just leaves.
    const third = projector();
    await third.waitForOutput(/holds the projector lease/);
    expect(await third.stop()).toEqual({ code: null, signal: 'SIGTERM' });

    const exit = await first.stop();
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(first.output()).toMatch(/Released the projector lease/);
    await second.waitForOutput(/Acquired the projector lease/);
    await writeHistory(store, { customers: 50, users: 5, patchesPerUser: 5 });
    await waitForCheckpoint(db, (await store.headPosition())!);

    expect(await snapshot(db)).toEqual(await cleanReplay());
  });

  it('stops with exit code 75 when another process has taken its lease', async () => {
    await writeHistory(store, { customers: 10, users: 2, patchesPerUser: 2 });
    const holder = projector();
    await holder.waitForOutput(/Acquired the projector lease/);
    await client
      .db(database)
      .collection('leases')
      .updateOne({ _id: 'projector' as never }, { $set: { owner: 'intruder' }, $inc: { version: 1 } });
    const exit = await holder.exited;
    expect(describeExit(exit)).toBe('code 75');
    expect(holder.output()).toMatch(/Lost the projector lease to intruder/);
  });

  it('stops its projections at start when EventStoreDB was wiped under kept checkpoints; a rebuild lets it start', async () => {
    await writeHistory(store, { customers: 30, users: 3, patchesPerUser: 3 });
    const db = client.db(database);
    const before = projector();
    await waitForCheckpoint(db, (await store.headPosition())!);
    await before.stop();
    // A new, shorter log: the read store's checkpoint now lies beyond its end.
    await store.close();
    await esdb.stop();
    esdb = await startEsdbDouble();
    store = await openTestStore();
    await writeHistory(store, { customers: 2, users: 0, patchesPerUser: 0 });

    const stalled = projector();
    await stalled.waitForOutput(/lies beyond the end of the event log[^"]*Run `projections rebuild`/);
    await stalled.stop();

    const live = await MongoReadStore.connect(mongoUri());
    const checkpoints = await MongoCheckpointStore.connect(mongoUri(), database);
    try {
      await new ReadModelRebuilder(
        store,
        new MongoRebuildTarget(live, mongoUri()),
        ALL_PROJECTIONS,
        READ_MODELS_CHECKPOINT,
        { checkpoints, names: [passwordSaga.name] },
      ).rebuild();
    } finally {
      await live.close();
      await checkpoints.close();
    }
    const after = projector();
    await after.waitForOutput(/Caught up/);
    await writeHistory(store, { customers: 1, users: 0, patchesPerUser: 0 });
    await waitForCheckpoint(db, (await store.headPosition())!);
    expect(await snapshot(db)).toEqual(await cleanReplay());
    // The password saga's checkpoint was moved back into the log too.
    expect(after.output()).not.toMatch(/lies beyond the end of the event log/);
  });

  it('serves /health/* and /metrics on METRICS_PORT, its projection position following the log', async () => {
    await writeHistory(store, { customers: 30, users: 2, patchesPerUser: 2 });
    const metricsPort = await freePort();
    const started = startProjector({
      DATA_DIR: dataDir,
      EVENTSTORE_URL: esdb.connectionString,
      MONGODB_URI: mongoUri(),
      DATA_KEY_SECRET,
      PROJECTOR_LEASE_TTL: String(LEASE_TTL_SECONDS),
      METRICS_PORT: String(metricsPort),
    });
    projectors.push(started);
    await started.waitForOutput(/Projector ready/);
    const operator = `http://127.0.0.1:${metricsPort}`;
    expect((await fetch(`${operator}/health/live`)).status).toBe(200);
    const ready = await fetch(`${operator}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ok',
      details: { eventStore: { status: 'up' }, readStore: { status: 'up' } },
    });

    const db = client.db(database);
    const position = async () => {
      await waitForCheckpoint(db, (await store.headPosition())!);
      const samples = await scrape(metricsPort);
      expect(valueOf(samples, 'chronicle_projection_lag_events', { kind: 'projection', name: 'users' })).toBe(
        0,
      );
      expect(valueOf(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
      return valueOf(samples, 'chronicle_projection_position', { kind: 'projection', name: 'customers' });
    };
    const before = await position();
    expect(before).toBe(Number((await store.headPosition())!.commit));
    await writeHistory(store, { customers: 5, users: 0, patchesPerUser: 0 });
    const after = await position();
    expect(after).toBe(Number((await store.headPosition())!.commit));
    expect(after).toBeGreaterThan(before);
  });

  it('refuses to start without MONGODB_URI, naming it', async () => {
    const misconfigured = startProjector({
      DATA_DIR: dataDir,
      EVENTSTORE_URL: esdb.connectionString,
      MONGODB_URI: '',
    });
    projectors.push(misconfigured);
    expect(describeExit(await misconfigured.exited)).toBe('code 78');
    expect(misconfigured.output()).toMatch(/MONGODB_URI must be set/);
  });

  it('without a lease, two runners on the same read models still equal a clean replay (position guard)', async () => {
    await writeHistory(store, { customers: 400, users: 20, patchesPerUser: 10 });
    const stores = await Promise.all([
      MongoReadStore.connect(mongoUri()),
      MongoReadStore.connect(mongoUri()),
    ]);
    // Different batch sizes: the two overlap on every document with different batch boundaries.
    const runners = stores.map(
      (readStore, i) =>
        new ProjectionProcessor(store, readStore, ALL_PROJECTIONS, {
          checkpointName: READ_MODELS_CHECKPOINT,
          parking: SqliteCheckpointStore.open(':memory:'),
          batchSize: [7, 13][i],
          logger: SILENT,
        }),
    );
    try {
      await Promise.all(runners.map((runner) => runner.start()));
    } finally {
      await Promise.all(runners.map((runner) => runner.stop()));
      await Promise.all(stores.map((readStore) => readStore.close()));
    }
    expect(await snapshot(client.db(database))).toEqual(await cleanReplay());
  });

  /** The read models as one projection runner builds them from the first event, in a fresh database. */
  async function cleanReplay() {
    const name = `clean_${randomUUID().replaceAll('-', '')}`;
    const readStore = await MongoReadStore.connect(mongoUri(name));
    const runner = new ProjectionProcessor(store, readStore, ALL_PROJECTIONS, {
      checkpointName: READ_MODELS_CHECKPOINT,
      parking: SqliteCheckpointStore.open(':memory:'),
      logger: SILENT,
    });
    try {
      await runner.start();
    } finally {
      await runner.stop();
      await readStore.close();
    }
    return snapshot(client.db(name));
  }
});

/** Every read model document as stored, with its position guard, and the checkpoint. */
async function snapshot(db: Db) {
  const all = (name: string) => db.collection(name).find({}).sort({ _id: 1 }).toArray();
  const [customers, users, checkpoint] = await Promise.all([
    all('customers'),
    all('users'),
    checkpointOf(db),
  ]);
  return { customers, users, checkpoint };
}

async function checkpointOf(db: Db): Promise<Position | null> {
  const record = await db.collection('checkpoints').findOne({ _id: READ_MODELS_CHECKPOINT as never });
  return record
    ? { commit: BigInt(record.commit as string), prepare: BigInt(record.prepare as string) }
    : null;
}

/** A generous ceiling: a projector started on 2 busy cores, a lease to take over, then a replay. */
async function waitForCheckpoint(db: Db, head: Position, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const checkpoint = await checkpointOf(db);
    if (checkpoint && positionKey(checkpoint) >= positionKey(head)) return;
    if (Date.now() > deadline) {
      const reached = checkpoint ? positionKey(checkpoint) : 'none';
      const logs = projectors.map((started) => `projector ${started.pid}:\n${started.output()}`);
      throw new Error(
        `The checkpoint did not reach ${positionKey(head)} within ${ms} ms (it is at ${reached}):\n${logs.join('\n')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

let nextCustomerId = 1;

/** Customers, and users patched several times each, decided by the domain as the service would. */
async function writeHistory(
  store: EventStore,
  counts: { customers: number; users: number; patchesPerUser: number },
): Promise<void> {
  const now = () => new Date().toISOString();
  const appends: Array<() => Promise<unknown>> = [];
  for (let i = 0; i < counts.customers; i++) {
    const customerId = nextCustomerId++;
    const events = decideCustomer(
      {
        type: 'RegisterCustomer',
        customerId,
        fields: { name: `Customer ${customerId}`, email: `c${customerId}@example.com` },
        now: now(),
      },
      initialCustomerState,
    );
    appends.push(() => store.append(`customer-${customerId}`, events.map(toNew), 'no_stream'));
  }
  for (let i = 0; i < counts.users; i++) {
    const userId = randomUUID();
    let state: UserState = initialUserState;
    const events: DomainEvent[] = [];
    const decide = (command: Parameters<typeof decideUser>[0]) => {
      for (const event of decideUser(command, state)) {
        state = evolveUser(state, event);
        events.push(event);
      }
    };
    decide({
      type: 'RegisterUser',
      userId,
      accountId: null,
      fields: { name: `User ${i}`, age: 20 },
      now: now(),
    });
    for (let p = 1; p <= counts.patchesPerUser; p++) {
      decide({ type: 'PatchUser', values: p % 2 ? { age: 20 + p } : { name: `User ${i}.${p}` }, now: now() });
    }
    appends.push(() => store.append(`user-${userId}`, events.map(toNew), 'no_stream'));
  }
  // A few appends at a time, so the log interleaves streams as concurrent requests would.
  for (let at = 0; at < appends.length; at += 50) {
    await Promise.all(appends.slice(at, at + 50).map((append) => append()));
  }
}

function toNew(event: DomainEvent): NewEvent {
  return {
    id: randomUUID(),
    type: event.type,
    data: event.data as Record<string, unknown>,
    metadata: {
      actor: 'system',
      correlationId: 'projector-e2e',
      causationId: null,
      occurredAt: new Date().toISOString(),
    },
  };
}
