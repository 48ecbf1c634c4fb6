/**
 * What the embedded store's actor and correlation-id indexes cost an append, store only (no HTTP):
 * 64 concurrent single-event appends (group commits) to SqliteEventStore, each event in a stream
 * of its own, on stores prefilled with PREFILL events, in rounds alternating between:
 * - ids as made now (time-ordered event and correlation ids, `timeOrderedId`), a random actor per
 *   event (the worst case: real actors are far fewer);
 * - random (version 4) event and correlation ids, a random actor: the ids as they were made before;
 * - the latter with the actor and correlation-id indexes dropped: the floor.
 * Prints appends per second (median of the rounds) and the bytes the process wrote per event
 * (/proc/self/io: the WAL and its checkpoints), which a busy machine does not blur.
 * Usage: SWC_NODE_PROJECT=tsconfig.json node -r @swc-node/register bench/tools/append-index-cost.ts
 * (PREFILL, SECONDS, ROUNDS: 200000, 3, 5 unless set).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { timeOrderedId } from '@chronicle/application';
import { NewEvent, SqliteEventStore } from '@chronicle/event-store';

interface Variant {
  name: string;
  /** Event and correlation ids. */
  id: () => string;
  indexes: boolean;
}

const VARIANTS: Variant[] = [
  { name: 'time-ordered ids, indexed', id: () => timeOrderedId(), indexes: true },
  { name: 'random ids, indexed', id: randomUUID, indexes: true },
  { name: 'random ids, no actor or correlation-id index', id: randomUUID, indexes: false },
];
const PREFILL = Number(process.env.PREFILL ?? 200_000);
const SECONDS = Number(process.env.SECONDS ?? 3);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const CONCURRENCY = 64;

const bytesWritten = () => Number(/write_bytes: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function event(variant: Variant): NewEvent {
  const now = new Date().toISOString();
  return {
    id: variant.id(),
    type: 'UserPatched.v1',
    data: { userId: randomUUID(), changes: { age: 42 }, modifiedon: now },
    metadata: { actor: randomUUID(), correlationId: variant.id(), causationId: null, occurredAt: now },
  };
}

async function prepare(variant: Variant): Promise<{ dir: string; store: SqliteEventStore }> {
  const dir = mkdtempSync(join(tmpdir(), 'append-index-cost-'));
  let store = SqliteEventStore.open(dir);
  for (let i = 0; i < PREFILL; i += 500) {
    await store.append(
      `prefill-${i}`,
      Array.from({ length: 500 }, () => event(variant)),
      'no_stream',
    );
  }
  if (!variant.indexes) {
    await store.close();
    const db = new Database(join(dir, 'events.db'));
    db.exec('DROP INDEX events_actor; DROP INDEX events_correlation_id;');
    db.close();
    store = SqliteEventStore.open(dir);
  }
  return { dir, store };
}

async function round(variant: Variant, store: SqliteEventStore): Promise<{ rate: number; bytes: number }> {
  let appended = 0;
  const before = bytesWritten();
  const until = Date.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < until) {
        await store.append(`bench-${randomUUID()}`, [event(variant)], 'no_stream');
        appended++;
      }
    }),
  );
  return { rate: appended / SECONDS, bytes: (bytesWritten() - before) / appended };
}

async function main(): Promise<void> {
  const prepared = [];
  for (const variant of VARIANTS) prepared.push({ variant, ...(await prepare(variant)) });
  const rates = new Map<string, number[]>();
  const bytes = new Map<string, number[]>();
  try {
    for (let i = 0; i < ROUNDS; i++) {
      for (const { variant, store } of prepared) {
        const result = await round(variant, store);
        rates.set(variant.name, [...(rates.get(variant.name) ?? []), result.rate]);
        bytes.set(variant.name, [...(bytes.get(variant.name) ?? []), result.bytes]);
      }
    }
  } finally {
    for (const { dir, store } of prepared) {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const floor = median(rates.get(VARIANTS[2].name)!);
  for (const { name } of VARIANTS) {
    const values = rates.get(name)!;
    console.log(
      `${name}: ${Math.round(median(values))} appends/s (${values.map(Math.round).join(', ')}), ` +
        `${(median(values) / floor).toFixed(2)} of the floor; ${Math.round(median(bytes.get(name)!))} bytes written per event`,
    );
  }
}

void main();
