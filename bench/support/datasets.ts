import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type EventStore, SqliteEventStore } from '@chronicle/event-store';
import { type Build, chronicleEnv, CURRENT, runCli, scratchDir } from './processes';

export const ADMIN = { email: 'bench-admin@example.com', password: 'bench admin passphrase' } as const;

export interface DataSet {
  dir: string;
  customers: number;
  adminUserId: string;
}

const dataSets = new Map<string, Promise<DataSet>>();

/**
 * A data directory with an admin account and `customers` customers, seeded through the CLI of
 * `build` (each build seeds its own: their stores differ). Seeded once per run and shared by the
 * benchmarks that only read it.
 */
export function customersDataSet(customers: number, build: Build = CURRENT): Promise<DataSet> {
  const key = `${build.root}|${customers}`;
  let dataSet = dataSets.get(key);
  if (!dataSet) {
    dataSet = keptDataSet(`customers-${customers}${buildSuffix(build)}`, async (dir) => {
      const adminUserId = await createAdmin(dir, build);
      process.stderr.write(`  seeding ${customers} customers (${build.name})...\n`);
      await runCli(dir, ['customers', 'seed', '--count', String(customers)], build);
      return { dir, customers, adminUserId };
    });
    dataSets.set(key, dataSet);
  }
  return dataSet;
}

/** A kept data set's name for a baseline build: its commit's. */
function buildSuffix(build: Build): string {
  return build.commit === undefined ? '' : `-${build.commit.slice(0, 12)}`;
}

/** A fresh data directory with the admin account and no customers, for benchmarks that write. */
export async function adminDataSet(name: string, build: Build = CURRENT): Promise<DataSet> {
  const dir = scratchDir(name);
  return { dir, customers: 0, adminUserId: await createAdmin(dir, build) };
}

/**
 * BENCH_KEEP_DATA=<dir>: the customers data sets are seeded there once and reused by later runs
 * (seeding 1,000,000 customers takes minutes on 2 shared cores). Benchmarks that start servers
 * on a kept data set leave the read models' snapshot in it.
 */
const KEEP_DATA = process.env.BENCH_KEEP_DATA;
const SEEDED_FILE = 'bench-seeded.json';

/** A data set seeded by `seed` into a directory of its own: kept under BENCH_KEEP_DATA when set. */
export async function keptDataSet(name: string, seed: (dir: string) => Promise<DataSet>): Promise<DataSet> {
  const kept = KEEP_DATA ? join(resolve(KEEP_DATA), name) : null;
  if (kept !== null && existsSync(join(kept, SEEDED_FILE))) {
    return JSON.parse(readFileSync(join(kept, SEEDED_FILE), 'utf8')) as DataSet;
  }
  if (kept !== null) rmSync(kept, { recursive: true, force: true });
  const dataSet = await seed(kept ?? scratchDir(name));
  if (kept !== null) writeFileSync(join(kept, SEEDED_FILE), JSON.stringify(dataSet));
  return dataSet;
}

async function createAdmin(dir: string, build: Build = CURRENT): Promise<string> {
  const [created] = await runCli(
    dir,
    [
      'accounts',
      'create',
      '--email',
      ADMIN.email,
      '--password',
      ADMIN.password,
      '--name',
      'Bench Admin',
      '--age',
      '40',
      '--admin',
    ],
    build,
  );
  return (created as { userId: string }).userId;
}

/** `build`'s event-store library, from its dist/ (typed by this worktree's sources). */
export async function eventStoreOf(build: Build): Promise<typeof import('@chronicle/event-store')> {
  return (await import(
    join(build.root, 'dist/libs/event-store/src/index.js')
  )) as typeof import('@chronicle/event-store');
}

/**
 * `build`'s own event store on `dir`, opened from its dist/ as its server opens it: the current
 * build encrypts personal values under each subject's key, a baseline before that does not.
 */
export async function buildEventStore(dir: string, build: Build): Promise<EventStore> {
  const { parseConfig } = (await import(
    join(build.root, 'dist/libs/config/src/index.js')
  )) as typeof import('@chronicle/config');
  return (await eventStoreOf(build)).openEventStore(parseConfig(chronicleEnv(dir)));
}

/**
 * Registers `count` users (with the `ids` given, or fresh ones) without accounts by appending their events directly: opening an
 * account per user would cost an Argon2id hash each and measure nothing the bench reports. Each
 * registered a millisecond after the one before, as users registering over time; a few thousand
 * appends at a time, so a million never sit in memory at once. Without `build`, straight into the
 * embedded store (personal values as written before encryption); with it, through that build's
 * own store, as its server would write them.
 */
export async function seedUsers(
  dir: string,
  count: number,
  ids: string[] = Array.from({ length: count }, () => randomUUID()),
  build?: Build,
): Promise<string[]> {
  const store = build === undefined ? SqliteEventStore.open(dir) : await buildEventStore(dir, build);
  try {
    const start = Date.now() - count;
    for (let from = 0; from < count; from += SEED_CHUNK) {
      await Promise.all(
        ids.slice(from, from + SEED_CHUNK).map((userId, offset) => {
          const index = from + offset;
          const createdon = new Date(start + index).toISOString();
          return store.append(
            `user-${userId}`,
            [
              {
                id: randomUUID(),
                type: 'UserRegistered.v2',
                data: { userId, accountId: null, name: `Bench User ${index}`, age: 30, createdon },
                metadata: {
                  actor: 'system',
                  correlationId: 'bench-seed',
                  causationId: null,
                  occurredAt: createdon,
                },
              },
            ],
            'no_stream',
          );
        }),
      );
    }
    return ids;
  } finally {
    await store.close();
  }
}

const SEED_CHUNK = 5_000;

const usersDataSets = new Map<number, Promise<DataSet>>();

/**
 * A data directory with the admin account and `users` more users (appended directly); seeded once
 * per run, or once under BENCH_KEEP_DATA.
 */
export function usersDataSet(users: number): Promise<DataSet> {
  let dataSet = usersDataSets.get(users);
  if (!dataSet) {
    dataSet = keptDataSet(`users-${users}`, async (dir) => {
      const adminUserId = await createAdmin(dir);
      process.stderr.write(`  seeding ${users} users...\n`);
      await seedUsers(dir, users);
      return { dir, customers: 0, adminUserId };
    });
    usersDataSets.set(users, dataSet);
  }
  return dataSet;
}

/**
 * For a benchmark that writes to a data set: a copy of it under bench/.work when it is kept
 * (BENCH_KEEP_DATA), so that the kept one stays as seeded; the data set itself otherwise.
 */
export function writableCopy(dataSet: DataSet, name: string): string {
  if (!KEEP_DATA) return dataSet.dir;
  const dir = scratchDir(name);
  cpSync(dataSet.dir, dir, { recursive: true });
  return dir;
}

/** Exchanges the admin's Basic credentials for a bearer token. */
export async function bearerToken(url: string): Promise<string> {
  const response = await fetch(`${url}/api/v1/account/tokens`, {
    method: 'POST',
    headers: { authorization: basicAuthorization() },
  });
  if (!response.ok)
    throw new Error(`POST /api/v1/account/tokens: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

export function basicAuthorization(): string {
  return `Basic ${Buffer.from(`${ADMIN.email}:${ADMIN.password}`).toString('base64')}`;
}
