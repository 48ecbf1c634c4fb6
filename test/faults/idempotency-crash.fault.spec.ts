import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { EventStore, SqliteEventStore } from '@chronicle/event-store';
import { EsdbEventStore } from '@chronicle/event-store/esdb';
import { startSharedDoubles } from '../e2e/support/api-process';
import { basic, newDataDir } from '../e2e/support/test-app';
import { createFaultAdmin, FAULT_ADMIN, startApi, stopRunning } from './support/api-process';

/** Kills the API with SIGKILL after a keyed request's events are committed, before its answer is kept. */
const KILL_BEFORE_ANSWER_KEPT = join(__dirname, 'support', 'kill-before-answer-kept.preload.ts');
/** REQUEST_TIMEOUT of the processes: a key's lease is twice that. */
const REQUEST_TIMEOUT_S = 1;
const LEASE_MS = 2 * REQUEST_TIMEOUT_S * 1000;

/**
 * Idempotency-Key through a crash (issue 33): the API is killed with SIGKILL between the append of
 * a keyed POST and the answer it keeps, then started again; the same request under the same key,
 * once the dead request's lease has ended, must not run again. On both shapes: the embedded store,
 * and EventStoreDB with MongoDB (their doubles).
 */
describe.each(['embedded', 'doubles'] as const)('Idempotency-Key through a crash (%s)', (shape) => {
  let dataDir: string;
  let env: Record<string, string>;
  let stopDoubles: (() => Promise<void>) | null;

  beforeEach(async () => {
    dataDir = newDataDir();
    env = { REQUEST_TIMEOUT: String(REQUEST_TIMEOUT_S), TOKEN_SECRET: randomBytes(32).toString('hex') };
    stopDoubles = null;
    if (shape === 'doubles') {
      const doubles = await startSharedDoubles(dataDir, 'idempotency_crash');
      env = { ...doubles.env, ...env };
      stopDoubles = doubles.stop;
    }
    // The CLI runs with the test's environment: pointed at the same stores for the admin it opens.
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      await createFaultAdmin(dataDir);
    } finally {
      process.env = saved;
    }
  });

  afterEach(async () => {
    await stopRunning();
    await stopDoubles?.();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The events of `type` as stored, read by this process beside the API's. */
  async function storedEvents(type: string): Promise<number> {
    const store: EventStore = env.EVENTSTORE_URL
      ? EsdbEventStore.connect(env.EVENTSTORE_URL)
      : SqliteEventStore.open(dataDir);
    try {
      let count = 0;
      for await (const event of store.readAll({ eventTypes: [type] })) if (event.type === type) count++;
      return count;
    } finally {
      await store.close();
    }
  }

  it('answers a retry after the lost answer without registering the customer again', async () => {
    const post = (url: string) =>
      fetch(`${url}/customers`, {
        method: 'POST',
        headers: {
          authorization: basic(FAULT_ADMIN),
          'content-type': 'application/json',
          'idempotency-key': 'one-customer',
        },
        body: JSON.stringify({ name: 'Only Once', email: 'once@example.com' }),
      });

    const doomed = await startApi(dataDir, env, { preloads: [KILL_BEFORE_ANSWER_KEPT] });
    // The process dies with the answer unsent: the client sees the connection drop.
    await expect(post(doomed.url)).rejects.toThrow();
    expect(await doomed.process.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // The key was claimed before the kill: its lease ends within LEASE_MS of now.
    const killed = Date.now();
    expect(await storedEvents('CustomerRegistered.v1')).toBe(1);

    const restarted = await startApi(dataDir, env);
    // Past the dead request's lease: its key may be taken over.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, killed + LEASE_MS + 100 - Date.now())));
    const retried = await post(restarted.url);
    const problem = (await retried.json()) as { type: string };
    expect({ status: retried.status, type: problem.type }).toEqual({
      status: 409,
      type: 'idempotency-key-answer-lost',
    });
    // Kept: a retry after this one is told the same, without looking again.
    const again = await post(restarted.url);
    expect(again.status).toBe(409);
    expect(((await again.json()) as { type: string }).type).toBe('idempotency-key-answer-lost');
    expect(await storedEvents('CustomerRegistered.v1')).toBe(1);

    // Another key still registers: the refusal is the key's alone.
    const other = await fetch(`${restarted.url}/customers`, {
      method: 'POST',
      headers: {
        authorization: basic(FAULT_ADMIN),
        'content-type': 'application/json',
        'idempotency-key': 'another-customer',
      },
      body: JSON.stringify({ name: 'Another', email: 'another@example.com' }),
    });
    expect(other.status).toBe(201);
    expect(await storedEvents('CustomerRegistered.v1')).toBe(2);
  });
});
