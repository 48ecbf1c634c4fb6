import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteCheckpointStore, SqliteEventStore } from '@chronicle/event-store';
import { ProjectionProcessor } from '../../projection-processor';
import { ALL_PROJECTIONS } from '../../projections/all-projections';
import { MemoryReadStore } from '../memory-read-store';
import { ReadModelSnapshots, SNAPSHOT_FILE } from './read-model-snapshots';

const CHECKPOINT = 'read-models';

/** Snapshots of the in-memory models on the real embedded store, fed by the real processor. */
describe('ReadModelSnapshots', () => {
  let dir: string;
  let events: SqliteEventStore;
  let parking: SqliteCheckpointStore;
  let lines: string[];
  const logger = {
    log: (message: string) => lines.push(`log: ${message}`),
    warn: (message: string) => lines.push(`warn: ${message}`),
    error: (message: string) => lines.push(`error: ${message}`),
  };
  const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };
  const running: Array<{ processor: ProjectionProcessor; snapshots: ReadModelSnapshots }> = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'chronicle-snapshots-'));
    events = SqliteEventStore.open(dir);
    parking = SqliteCheckpointStore.open(':memory:');
    lines = [];
  });

  afterEach(async () => {
    for (const { processor, snapshots } of running.splice(0)) {
      await processor.stop();
      await snapshots.stop();
    }
    await parking.close();
    await events.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function registerCustomers(from: number, count: number): Promise<void> {
    await Promise.all(
      Array.from({ length: count }, (_, i) => {
        const id = from + i;
        const at = '2026-01-01T00:00:00.000Z';
        return events.append(
          `customer-${id}`,
          [
            {
              id: randomUUID(),
              type: 'CustomerRegistered.v1',
              data: { customerId: id, name: `Customer ${id}`, email: `c${id}@example.com`, createdon: at },
              metadata: { actor: 'system', correlationId: 'test', causationId: null, occurredAt: at },
            },
          ],
          'no_stream',
        );
      }),
    );
  }

  /** A server's start: snapshot restored, then the processor caught up. */
  async function start(everyEvents = 100, maxTimeShare = 1) {
    const store = new MemoryReadStore();
    const snapshots = new ReadModelSnapshots(store, events, {
      dataDir: dir,
      checkpointName: CHECKPOINT,
      logger,
      policy: { everyEvents, maxTimeShare },
    });
    await snapshots.restore();
    const restoredAt = await store.getCheckpoint(CHECKPOINT);
    const processor = new ProjectionProcessor(events, store, ALL_PROJECTIONS, {
      checkpointName: CHECKPOINT,
      parking,
      logger: quiet,
      batchSize: 100,
    });
    running.push({ processor, snapshots });
    await processor.start();
    await snapshots.settled();
    return { store, snapshots, processor, restoredAt };
  }

  async function stop(started: { processor: ProjectionProcessor; snapshots: ReadModelSnapshots }) {
    await started.processor.stop();
    await started.snapshots.stop();
    running.splice(running.indexOf(started), 1);
  }

  async function customerIds(store: MemoryReadStore): Promise<number[]> {
    const ids: number[] = [];
    for await (const doc of store.documents('customers')) ids.push(doc.id);
    return ids;
  }

  const file = () => join(dir, SNAPSHOT_FILE);

  it('writes a private snapshot as the policy says and at a graceful stop; a restart replays only the events after it', async () => {
    await registerCustomers(1, 250);
    const first = await start();
    expect(statSync(file()).mode & 0o777).toBe(0o600);
    expect(lines.some((line) => /^log: Read models' snapshot written at position \d+/.test(line))).toBe(true);
    await stop(first);

    await registerCustomers(251, 10);
    const second = await start();
    // Restored where the first run stopped: a graceful stop writes a last snapshot.
    expect(second.restoredAt?.commit).toBe(250n);
    expect(
      lines.some((line) => /^log: Read models restored from .* at position \d+: \d+ customers/.test(line)),
    ).toBe(true);
    expect(await customerIds(second.store)).toEqual(Array.from({ length: 260 }, (_, i) => i + 1));
    expect(await second.store.getCheckpoint(CHECKPOINT)).toEqual(await events.headPosition());
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('snapshots a store gone quiet once the pause after the last write is over', async () => {
    await registerCustomers(1, 250);
    // Each write is followed by a pause as long as itself: the last batch comes during one.
    await start(100, 0.5);
    const deadline = Date.now() + 10_000;
    while (
      !lines.some((line) => line.includes('snapshot written at position 250')) &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(lines.filter((line) => line.includes('snapshot written at position 250'))).toHaveLength(1);
  });

  it.each([
    ['a damaged byte', (bytes: Buffer) => (bytes[bytes.length >> 1] ^= 0xff), /digest does not match/],
    ['a torn end', (bytes: Buffer) => bytes.subarray(0, bytes.length - 100), /torn/],
    ['no snapshot at all', () => Buffer.from('garbage'), /too short/],
  ])(
    'ignores a snapshot with %s, with a log line, and rebuilds from the events',
    async (_, damage, reason) => {
      await registerCustomers(1, 150);
      await stop(await start());
      writeFileSync(file(), mutated(readFileSync(file()), damage));

      const restarted = await start(10_000);
      expect(restarted.restoredAt).toBeNull();
      expect(lines).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^warn: Ignoring the read models' snapshot .*${reason.source}.*rebuilding them from the events`,
          ),
        ),
      );
      expect(await customerIds(restarted.store)).toHaveLength(150);
    },
  );

  it('ignores a snapshot of another store', async () => {
    await registerCustomers(1, 150);
    await stop(await start());
    writeFileSync(join(dir, 'store-id'), `${randomUUID()}\n`);

    const restarted = await start(10_000);
    expect(restarted.restoredAt).toBeNull();
    expect(lines).toContainEqual(
      expect.stringMatching(/^warn: Ignoring .*: it was taken of store .*, and this is store/),
    );
    expect(await customerIds(restarted.store)).toHaveLength(150);
  });

  it('ignores a snapshot ahead of the end of the event log, or taken of another history', async () => {
    await registerCustomers(1, 150);
    await stop(await start());
    const snapshot = readFileSync(file());
    // The same store (its store-id) with a shorter log: as if restored from an older backup.
    await events.close();
    const storeId = readFileSync(join(dir, 'store-id'), 'utf8').trim();
    const fresh = mkdtempSync(join(tmpdir(), 'chronicle-snapshots-'));
    await SqliteEventStore.open(fresh).close();
    const db = new Database(join(fresh, 'events.db'));
    db.prepare('UPDATE store_identity SET store_id = ?').run(storeId);
    db.close();
    writeFileSync(join(fresh, 'store-id'), `${storeId}\n`);
    events = SqliteEventStore.open(fresh);
    const original = dir;
    dir = fresh;
    writeFileSync(file(), snapshot);
    await registerCustomers(1001, 100);

    const behind = await start(10_000);
    expect(behind.restoredAt).toBeNull();
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^warn: Ignoring .*: its checkpoint \d+ lies beyond the end of the event log \(100\)/,
      ),
    );
    await stop(behind);

    // More events than the snapshot covers, but not those it was taken of.
    await registerCustomers(2001, 100);
    writeFileSync(file(), snapshot);
    const other = await start(10_000);
    expect(other.restoredAt).toBeNull();
    expect(lines).toContainEqual(
      expect.stringMatching(/^warn: Ignoring .*: the event log holds another history/),
    );
    expect(await customerIds(other.store)).toHaveLength(200);
    rmSync(original, { recursive: true, force: true });
  });

  it('removes the snapshot when a rebuild replaces the models, and writes the new ones later', async () => {
    await registerCustomers(1, 150);
    const started = await start();
    expect(statSync(file(), { throwIfNoEntry: false })).toBeDefined();

    const rebuilt = new MemoryReadStore();
    await rebuilt.applyBatch([], { projection: CHECKPOINT, position: (await events.headPosition())! });
    expect(started.store.adopt(rebuilt, CHECKPOINT)).toBe(true);
    expect(statSync(file(), { throwIfNoEntry: false })).toBeUndefined();

    // The next batch finds every event since the start of the log uncovered: a snapshot is due.
    await registerCustomers(151, 1);
    expect(await started.processor.waitFor((await events.headPosition())!, 5_000)).toBe(true);
    await started.snapshots.settled();
    expect(statSync(file(), { throwIfNoEntry: false })).toBeDefined();
  });

  it('removes the temporary files of writers that died, and keeps those of live ones', async () => {
    const dead = join(dir, `${SNAPSHOT_FILE}.999999999.abcd.tmp`);
    const live = join(dir, `${SNAPSHOT_FILE}.${process.ppid}.abcd.tmp`);
    writeFileSync(dead, 'partial');
    writeFileSync(live, 'partial');
    await start();
    expect(statSync(dead, { throwIfNoEntry: false })).toBeUndefined();
    expect(statSync(live, { throwIfNoEntry: false })).toBeDefined();
  });
});

function mutated(bytes: Buffer, damage: (bytes: Buffer) => unknown): Buffer {
  const copy = Buffer.from(bytes);
  const result = damage(copy);
  return result instanceof Buffer ? result : copy;
}
