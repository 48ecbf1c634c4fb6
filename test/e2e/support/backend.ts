import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import { MongoClient } from 'mongodb';
import { EventStore, SqliteEventStore } from '@chronicle/event-store';
import { EsdbEventStore } from '@chronicle/event-store/esdb';
import { ESDB_QUIRKS, EsdbDouble, EsdbQuirk, startEsdbDouble } from '../../doubles/esdb/esdb-double';
import { MongoDouble, startMongoDouble } from '../../doubles/mongo/mongo-double';

/**
 * Which stores the e2e suite runs on: `embedded` (the default: SQLite under DATA_DIR, read models
 * in memory, projections in the API) or `doubles` (E2E_BACKEND=doubles: the EventStoreDB gRPC
 * double, the MongoDB wire double, and the projections in a separate projector process).
 */
export type E2eBackend = 'embedded' | 'doubles';

export const E2E_BACKEND: E2eBackend = parseBackend(process.env.E2E_BACKEND);

function parseBackend(value: string | undefined): E2eBackend {
  if (value === undefined || value === '' || value === 'embedded') return 'embedded';
  if (value === 'doubles') return 'doubles';
  throw new Error(`E2E_BACKEND must be "embedded" or "doubles", not "${value}"`);
}

/**
 * On the doubles backend, the EventStoreDB double's checkpoint quirks (E2E_ESDB_QUIRKS: a comma
 * list of EsdbQuirk names, or `all`): the suite run as against the server versions that have them.
 */
export const E2E_ESDB_QUIRKS: readonly EsdbQuirk[] = parseQuirks(process.env.E2E_ESDB_QUIRKS);

function parseQuirks(value: string | undefined): EsdbQuirk[] {
  if (value === undefined || value.trim() === '') return [];
  if (value.trim() === 'all') return [...ESDB_QUIRKS];
  return value.split(',').map((name) => {
    const quirk = ESDB_QUIRKS.find((known) => known === name.trim());
    if (!quirk) throw new Error(`E2E_ESDB_QUIRKS: unknown quirk "${name}"; known: ${ESDB_QUIRKS.join(', ')}`);
    return quirk;
  });
}

interface DataDirStores {
  esdb: EsdbDouble;
  database: string;
  env: Record<string, string>;
}

// Per test file (jest loads this module afresh for each): one MongoDB double with a database per
// data directory, and one EventStoreDB double per data directory, so that a data directory stands
// for one deployment, as it does on the embedded default, and a restart on it finds its data.
let mongo: Promise<MongoDouble> | null = null;
const stores = new Map<string, Promise<DataDirStores>>();

/**
 * The environment that points the API, the projector and the CLI at the data directory's stores:
 * EVENTSTORE_URL and MONGODB_URI on the doubles (started on first use), nothing on embedded.
 */
export async function backendEnv(dataDir: string): Promise<Record<string, string>> {
  if (E2E_BACKEND === 'embedded') return {};
  let entry = stores.get(dataDir);
  if (!entry) {
    entry = openStores(dataDir);
    stores.set(dataDir, entry);
  }
  return (await entry).env;
}

async function openStores(dataDir: string): Promise<DataDirStores> {
  mongo ??= startMongoDouble();
  const [mongoDouble, esdb] = await Promise.all([mongo, startEsdbDouble({ quirks: E2E_ESDB_QUIRKS })]);
  const database = `e2e_${basename(dataDir).replace(/\W/g, '_')}`;
  const uri = new URL(mongoDouble.uri);
  uri.pathname = `/${database}`;
  return {
    esdb,
    database,
    // One data key secret per deployment, as every instance of one must share it.
    env: {
      EVENTSTORE_URL: esdb.connectionString,
      MONGODB_URI: uri.toString(),
      DATA_KEY_SECRET: randomBytes(32).toString('hex'),
    },
  };
}

/**
 * The data directory's event store, without the upcasting the app puts in front of it: what an
 * older build wrote, and what is stored, are read and written here as they are.
 */
export async function rawStore(dataDir: string): Promise<EventStore> {
  const { EVENTSTORE_URL } = await backendEnv(dataDir);
  return EVENTSTORE_URL ? EsdbEventStore.connect(EVENTSTORE_URL) : SqliteEventStore.open(dataDir);
}

/** The data directory's EventStoreDB double (doubles backend only), to edit its log as an attacker would. */
export async function esdbDoubleOf(dataDir: string): Promise<EsdbDouble> {
  const entry = stores.get(dataDir);
  if (!entry) throw new Error(`No EventStoreDB double for ${dataDir}: the backend is ${E2E_BACKEND}`);
  return (await entry).esdb;
}

/** Stops the data directory's event store double and drops its database. */
export async function discardBackend(dataDir: string): Promise<void> {
  const entry = stores.get(dataDir);
  if (!entry) return;
  stores.delete(dataDir);
  const { esdb, database } = await entry;
  await esdb.stop();
  const client = await MongoClient.connect((await mongo!).uri);
  try {
    await client.db(database).dropDatabase();
  } finally {
    await client.close();
  }
}

const leftRunning = new Set<() => Promise<void>>();

/**
 * Registers what stops a process or app a test started, run at the end of the test file before the
 * doubles stop, in case the test failed before stopping it; the returned function unregisters it.
 */
export function stopAtFileEnd(stop: () => Promise<void>): () => void {
  leftRunning.add(stop);
  return () => leftRunning.delete(stop);
}

afterAll(async () => {
  const stops = [...leftRunning];
  leftRunning.clear();
  await Promise.allSettled(stops.map((stop) => stop()));
  const open = [...stores.values()];
  stores.clear();
  await Promise.all(open.map(async (entry) => (await entry).esdb.stop()));
  await (await mongo)?.stop();
  mongo = null;
});
