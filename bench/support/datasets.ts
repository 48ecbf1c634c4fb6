import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SqliteEventStore } from '@chronicle/event-store';
import { runCli, scratchDir } from './processes';

export const ADMIN = { email: 'bench-admin@example.com', password: 'bench admin passphrase' } as const;

export interface DataSet {
  dir: string;
  customers: number;
  adminUserId: string;
}

const dataSets = new Map<number, Promise<DataSet>>();

/**
 * A data directory with an admin account and `customers` customers, seeded through the CLI.
 * Seeded once per run and shared by the benchmarks that only read it.
 */
export function customersDataSet(customers: number): Promise<DataSet> {
  let dataSet = dataSets.get(customers);
  if (!dataSet) {
    dataSet = seedCustomers(customers);
    dataSets.set(customers, dataSet);
  }
  return dataSet;
}

/** A fresh data directory with the admin account and no customers, for benchmarks that write. */
export async function adminDataSet(name: string): Promise<DataSet> {
  const dir = scratchDir(name);
  return { dir, customers: 0, adminUserId: await createAdmin(dir) };
}

/**
 * BENCH_KEEP_DATA=<dir>: the customers data sets are seeded there once and reused by later runs
 * (seeding 1,000,000 customers takes minutes on 2 shared cores). Benchmarks that start servers
 * on a kept data set leave the read models' snapshot in it.
 */
const KEEP_DATA = process.env.BENCH_KEEP_DATA;
const SEEDED_FILE = 'bench-seeded.json';

async function seedCustomers(customers: number): Promise<DataSet> {
  const kept = KEEP_DATA ? join(resolve(KEEP_DATA), `customers-${customers}`) : null;
  if (kept !== null && existsSync(join(kept, SEEDED_FILE))) {
    return JSON.parse(readFileSync(join(kept, SEEDED_FILE), 'utf8')) as DataSet;
  }
  if (kept !== null) rmSync(kept, { recursive: true, force: true });
  const dir = kept ?? scratchDir(`customers-${customers}`);
  const adminUserId = await createAdmin(dir);
  process.stderr.write(`  seeding ${customers} customers...\n`);
  await runCli(dir, ['customers', 'seed', '--count', String(customers)]);
  const dataSet = { dir, customers, adminUserId };
  if (kept !== null) writeFileSync(join(kept, SEEDED_FILE), JSON.stringify(dataSet));
  return dataSet;
}

async function createAdmin(dir: string): Promise<string> {
  const [created] = await runCli(dir, [
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
  ]);
  return (created as { userId: string }).userId;
}

/**
 * Registers `count` users (with the `ids` given, or fresh ones) without accounts by appending their events directly: opening an
 * account per user would cost an Argon2id hash each and measure nothing the bench reports. Each
 * registered a millisecond after the one before, as users registering over time; a few thousand
 * appends at a time, so a million never sit in memory at once.
 */
export async function seedUsers(
  dir: string,
  count: number,
  ids: string[] = Array.from({ length: count }, () => randomUUID()),
): Promise<string[]> {
  const store = SqliteEventStore.open(dir);
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

/** A data directory with the admin account and `users` more users; seeded once per run. */
export function usersDataSet(users: number): Promise<DataSet> {
  let dataSet = usersDataSets.get(users);
  if (!dataSet) {
    dataSet = (async () => {
      const dataSet = await adminDataSet(`users-${users}`);
      process.stderr.write(`  seeding ${users} users...\n`);
      await seedUsers(dataSet.dir, users);
      return dataSet;
    })();
    usersDataSets.set(users, dataSet);
  }
  return dataSet;
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
