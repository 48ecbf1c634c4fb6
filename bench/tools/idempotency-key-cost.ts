/**
 * What an Idempotency-Key costs the API's event loop, store only (no HTTP): IdempotencyKeys over
 * SqliteIdempotencyStore and an embedded event log, as the API composes them, each key claimed,
 * then answered a turn later, PER_TURN keys at once (requests arriving together), on 64 accounts.
 * Rounds alternate between the store as it is (checkpoints in a worker thread: BackgroundCheckpoints)
 * and the same store with SQLite's own checkpoints, taken by a commit on this thread every 1,000
 * pages. Prints, per key, the main thread's wall time (what holds requests up) and the process's
 * CPU time (every thread), medians of the rounds.
 * Usage: SWC_NODE_PROJECT=tsconfig.json node -r @swc-node/register bench/tools/idempotency-key-cost.ts
 * (KEYS, ROUNDS, PER_TURN: 20000, 5, 1 unless set).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChronicleConfig } from '@chronicle/config';
import { BackgroundCheckpoints, SqliteEventStore } from '@chronicle/event-store';
import { IdempotencyKeys, requestFingerprint } from '../../apps/api/src/idempotency/idempotency-keys';
import { SqliteIdempotencyStore } from '../../apps/api/src/idempotency/sqlite-idempotency-store';
import { positiveEnv } from '../support/load';
import { spread } from '../support/stats';

const KEYS = positiveEnv('KEYS', 20_000);
const ROUNDS = positiveEnv('ROUNDS', 5);
const PER_TURN = positiveEnv('PER_TURN', 1);
const config = { tokenSecret: Buffer.alloc(32, 9), requestTimeoutSeconds: 30 } as ChronicleConfig;
const accounts = Array.from({ length: 64 }, () => randomUUID());
/** An answer the size of a PATCH /users/{id}'s, and its headers. */
const body = Buffer.from(
  JSON.stringify({
    id: randomUUID(),
    email: 'someone@example.com',
    firstname: 'Ann',
    lastname: 'Bee',
    age: 33,
  }),
);
const headers = { 'content-type': 'application/json; charset=utf-8', etag: '"7"' };

/** SQLite's own checkpoints: the store's worker stopped, the connection's threshold back at 1,000 pages. */
async function withoutWorker(store: SqliteIdempotencyStore): Promise<void> {
  const opened = store as unknown as {
    db: { pragma(sql: string): unknown };
    checkpoints: BackgroundCheckpoints | null;
  };
  await opened.checkpoints?.stop();
  opened.checkpoints = null;
  opened.db.pragma('wal_autocheckpoint = 1000');
}

async function round(worker: boolean): Promise<{ wallUs: number; cpuUs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'idempotency-key-cost-'));
  const store = new SqliteIdempotencyStore(dir);
  const log = SqliteEventStore.open(dir);
  const keys = new IdempotencyKeys(store, log, config);
  let next = 0;
  const one = async (): Promise<void> => {
    const i = next++;
    const account = accounts[i % accounts.length];
    const fingerprint = requestFingerprint('PATCH', `/users/${account}`, { age: 18 + (i % 80) });
    const outcome = await keys.begin(account, randomUUID(), fingerprint, randomUUID());
    if (!('held' in outcome)) throw new Error('a new key was not held');
    // The handler's turn, then the answer kept.
    await new Promise((resolve) => setImmediate(resolve));
    await outcome.held.finish(200, headers, body);
  };
  const run = async (count: number) => {
    for (let done = 0; done < count; done += PER_TURN)
      await Promise.all(Array.from({ length: PER_TURN }, one));
  };
  await run(2_000);
  if (!worker) await withoutWorker(store);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await run(KEYS);
  const wallUs = (1000 * (performance.now() - started)) / KEYS;
  const used = process.cpuUsage(cpu);
  await keys.onApplicationShutdown();
  await log.close();
  rmSync(dir, { recursive: true, force: true });
  return { wallUs, cpuUs: (used.user + used.system) / KEYS };
}

async function main(): Promise<void> {
  type Rounds = Array<{ wallUs: number; cpuUs: number }>;
  const results: { worker: Rounds; connection: Rounds } = { worker: [], connection: [] };
  for (let i = 0; i < ROUNDS; i += 1) {
    results.worker.push(await round(true));
    results.connection.push(await round(false));
  }
  const show = (name: string, rounds: Rounds) => {
    const wall = spread(rounds.map((r) => r.wallUs));
    const cpu = spread(rounds.map((r) => r.cpuUs));
    console.log(
      `${name}: main thread ${wall.median.toFixed(1)} µs per key (${wall.min.toFixed(1)}–${wall.max.toFixed(1)}), ` +
        `CPU ${cpu.median.toFixed(1)} µs (${cpu.min.toFixed(1)}–${cpu.max.toFixed(1)})`,
    );
  };
  console.log(`${KEYS} keys per round, ${ROUNDS} rounds, ${PER_TURN} per turn, Node ${process.version}`);
  show('checkpoints in a worker thread', results.worker);
  show("SQLite's own checkpoints, on this thread", results.connection);
}

void main();
