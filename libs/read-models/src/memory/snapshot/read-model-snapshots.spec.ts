import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventStore, position, SqliteCheckpointStore, SqliteEventStore } from '@chronicle/event-store';
import { ProjectionProcessor } from '../../projection-processor';
import { ALL_PROJECTIONS } from '../../projections/all-projections';
import { MemoryRebuildTarget } from '../../rebuild/rebuild-target';
import { MemoryReadStore } from '../memory-read-store';
import { ReadModelSnapshots, SNAPSHOT_FILE } from './read-model-snapshots';
import { reaches } from '../../projection-processor.spec-helper';

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
  const attached: ReadModelSnapshots[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'chronicle-snapshots-'));
    events = SqliteEventStore.open(dir);
    parking = SqliteCheckpointStore.open(':memory:');
    lines = [];
  });

  afterEach(async () => {
    jest.useRealTimers();
    jest.restoreAllMocks();
    for (const snapshots of attached.splice(0)) await snapshots.stop();
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

  /** A new store with its snapshot restored, as at a server's start. */
  async function restored(
    policy: { everyEvents: number; maxTimeShare: number },
    {
      checkpointName = CHECKPOINT,
      eventStore = events,
    }: { checkpointName?: string; eventStore?: EventStore } = {},
  ) {
    const store = new MemoryReadStore();
    const snapshots = new ReadModelSnapshots(store, eventStore, {
      dataDir: dir,
      checkpointName,
      logger,
      policy,
    });
    await snapshots.restore();
    return { store, snapshots };
  }

  /** A server's start: snapshot restored, then the processor caught up. */
  async function start(everyEvents = 100, maxTimeShare = 1) {
    const { store, snapshots } = await restored({ everyEvents, maxTimeShare });
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
    const onEmpty = await start(10_000);
    expect(onEmpty.restoredAt).toBeNull();
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^warn: Ignoring .*: its checkpoint \d+ lies beyond the end of the event log \(empty\)/,
      ),
    );
    await stop(onEmpty);
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
    const discard = jest.spyOn(ReadModelSnapshots, 'discard');
    expect(started.store.adopt(rebuilt, CHECKPOINT)).toBe(true);
    // Once removed, before the write of the new models that follows.
    await discard.mock.results[0].value;
    expect(statSync(file(), { throwIfNoEntry: false })).toBeUndefined();

    // The next batch finds every event since the start of the log uncovered: a snapshot is due.
    await registerCustomers(151, 1);
    expect(await reaches(started.processor, (await events.headPosition())!, 5_000)).toBe(true);
    await started.snapshots.settled();
    expect(statSync(file(), { throwIfNoEntry: false })).toBeDefined();
  });

  it('answers a rebuild made during a write only once the old snapshot is gone: a crash right after cannot bring it back', async () => {
    await registerCustomers(1, 3);
    const { store, apply, snapshots } = await observed({ everyEvents: 1, maxTimeShare: 1 });
    await apply(1);
    await snapshots.settled();
    expect(statSync(file(), { throwIfNoEntry: false })).toBeDefined();
    // This batch starts a write (due every event), still under way when the rebuild goes live.
    await apply(2);
    const rebuilt = new MemoryReadStore();
    await rebuilt.applyBatch([], { projection: CHECKPOINT, position: position(2) });
    const caughtUp = await new MemoryRebuildTarget(store, CHECKPOINT).swapIn(
      rebuilt,
      position(2),
      () => Promise.reject(new Error('nothing to catch up')),
      'all',
    );

    expect(caughtUp).toBe(0);
    expect(statSync(file(), { throwIfNoEntry: false })).toBeUndefined();
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

  /** Snapshots observing a store the test feeds itself, batch by batch (no processor). */
  async function observed(...args: Parameters<typeof restored>) {
    const { store, snapshots } = await restored(...args);
    attached.push(snapshots);
    const apply = (commit: number, projection = CHECKPOINT) =>
      store.applyBatch([], { projection, position: position(commit) });
    return { store, snapshots, apply };
  }

  const written = () => lines.filter((line) => line.startsWith("log: Read models' snapshot written"));
  const errors = () => lines.filter((line) => line.startsWith('error: '));
  const fakeClock = () =>
    jest.useFakeTimers({
      doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'queueMicrotask', 'Date'],
    });

  /** The event store, as if each anchor read (inside a write, batches held) took `ms` on the fake clock. */
  function slowAnchorReads(ms: number, during: () => void = () => undefined): EventStore {
    return new Proxy(events, {
      get(target, property) {
        if (property === 'readAll') {
          return (...args: Parameters<EventStore['readAll']>) => {
            jest.advanceTimersByTime(ms);
            during();
            return target.readAll(...args);
          };
        }
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  it('logs a write with its size and durations, none above the time it took', async () => {
    await registerCustomers(1, 3);
    const { apply, snapshots } = await observed({ everyEvents: 1, maxTimeShare: 1 });
    const before = performance.now();
    await apply(3);
    await snapshots.settled();
    const elapsed = performance.now() - before;

    const [line] = written();
    const match =
      /^log: Read models' snapshot written at position 3: (\d+\.\d) MiB in (\d+) ms \(batches held (\d+) ms\)$/.exec(
        line,
      );
    expect(match).not.toBeNull();
    const [, mib, ms, heldMs] = match!;
    expect(mib).toBe((statSync(file()).size / 2 ** 20).toFixed(1));
    expect(Number(ms)).toBeLessThanOrEqual(Math.ceil(elapsed));
    expect(Number(heldMs)).toBeLessThanOrEqual(Number(ms));
  });

  it('logs a restore with its figures, restores a snapshot at the end of the log, and warns of nothing without one', async () => {
    await registerCustomers(1, 4);
    const first = await observed({ everyEvents: 1, maxTimeShare: 1 });
    expect(lines).toEqual([]);
    await first.apply(4);
    await first.snapshots.settled();
    await first.snapshots.stop();
    attached.splice(0);

    lines = [];
    const before = performance.now();
    const second = await observed({ everyEvents: 1, maxTimeShare: 1 });
    const elapsed = performance.now() - before;
    // Exactly at the end of the log (position 4 of 4): still this history.
    expect(await second.store.getCheckpoint(CHECKPOINT)).toEqual(position(4));
    expect(lines).toHaveLength(1);
    const match = new RegExp(
      `^log: Read models restored from ${file().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(written \\d{4}-\\d\\d-\\d\\dT[^)]+\\) ` +
        'at position 4: 0 customers, 0 users in (\\d+) ms; replaying the events after it$',
    ).exec(lines[0]);
    expect(match).not.toBeNull();
    expect(Number(match![1])).toBeLessThanOrEqual(Math.ceil(elapsed));
  });

  it('removes the snapshot at once after a batch that deletes documents, writing nothing: an erased name leaves the disk', async () => {
    await registerCustomers(1, 3);
    const { store, snapshots } = await observed({ everyEvents: 1, maxTimeShare: 1 });
    const zoe = { name: 'Zoë Erasable', email: 'zoe@erasure.example', createdon: '2026-01-01T00:00:00.000Z' };
    await store.applyBatch([{ collection: 'customers', id: 1, position: position(1), set: zoe }], {
      projection: CHECKPOINT,
      position: position(1),
    });
    await snapshots.settled();
    expect(readFileSync(file()).includes(Buffer.from('zoe@erasure.example'))).toBe(true);
    // Due only every 1,000 events from now on: a plain batch writes nothing, a removal removes.
    await snapshots.stop();
    attached.splice(0);
    const later = await observed({ everyEvents: 1_000, maxTimeShare: 1 });
    await later.apply(2);
    await later.snapshots.settled();
    expect(readFileSync(file()).includes(Buffer.from('zoe@erasure.example'))).toBe(true);
    const writes = written().length;
    await later.store.applyBatch([{ collection: 'customers', id: 1, position: position(3), remove: true }], {
      projection: CHECKPOINT,
      position: position(3),
    });
    await later.snapshots.settled();
    // Its cost does not grow with the models: no snapshot encoded.
    expect(statSync(file(), { throwIfNoEntry: false })).toBeUndefined();
    expect(written()).toHaveLength(writes);
    // A graceful stop writes the models as they are now, without her.
    await later.snapshots.stop();
    expect(readFileSync(file()).includes(Buffer.from('zoe@erasure.example'))).toBe(false);
    expect(readFileSync(file()).includes(Buffer.from('Zoë Erasable'))).toBe(false);
    expect(written()).toEqual(expect.arrayContaining([expect.stringContaining('written at position 3:')]));
  });

  it('sets off no write of the whole models after an erasure: the next comes when the policy would have written it', async () => {
    await registerCustomers(1, 3);
    const { apply, store, snapshots } = await observed({ everyEvents: 2, maxTimeShare: 1 });
    await apply(2);
    await snapshots.settled();
    expect(written()).toEqual([expect.stringContaining('written at position 2:')]);
    await store.applyBatch([{ collection: 'customers', id: 1, position: position(3), remove: true }], {
      projection: CHECKPOINT,
      position: position(3),
    });
    await snapshots.settled();
    // One event past the snapshot it removed: not due (every 2), so nothing is encoded.
    expect(statSync(file(), { throwIfNoEntry: false })).toBeUndefined();
    expect(written()).toHaveLength(1);
  });

  it('removes the snapshot a write under way during an erasure leaves, once that write is done', async () => {
    await registerCustomers(1, 3);
    const { store, snapshots } = await observed({ everyEvents: 1, maxTimeShare: 0.001 });
    const zoe = { name: 'Zoë Erasable', email: 'zoe@erasure.example', createdon: '2026-01-01T00:00:00.000Z' };
    // This batch starts a write of her (due every event, then not for a while), still under way when...
    await store.applyBatch([{ collection: 'customers', id: 1, position: position(1), set: zoe }], {
      projection: CHECKPOINT,
      position: position(1),
    });
    // ...the store reports a batch that deleted documents.
    snapshots.applied({ projection: CHECKPOINT, position: position(1) }, true);
    await snapshots.settled();
    expect(written()).toEqual([expect.stringContaining('written at position 1:')]);
    expect(statSync(file(), { throwIfNoEntry: false })).toBeUndefined();
  });

  it('writes for its own checkpoint only, and restores its own among several', async () => {
    await registerCustomers(1, 3);
    const { apply, snapshots } = await observed({ everyEvents: 1, maxTimeShare: 1 });
    await apply(3, 'another-projection');
    await snapshots.settled();
    expect(written()).toEqual([]);
    expect(statSync(file(), { throwIfNoEntry: false })).toBeUndefined();

    await apply(2);
    await snapshots.settled();
    expect(written()).toEqual([expect.stringContaining('written at position 2:')]);
    await snapshots.stop();
    attached.splice(0);

    const restarted = await observed({ everyEvents: 1, maxTimeShare: 1 });
    expect(await restarted.store.getCheckpoint(CHECKPOINT)).toEqual(position(2));
    expect(lines).toContainEqual(expect.stringMatching(/^log: Read models restored .* at position 2: /));
  });

  it('ignores a snapshot that holds no checkpoint of its own', async () => {
    await registerCustomers(1, 2);
    const other = await observed(
      { everyEvents: 1, maxTimeShare: 1 },
      { checkpointName: 'another-projection' },
    );
    await other.apply(2, 'another-projection');
    await other.snapshots.stop();
    attached.splice(0);

    const restarted = await observed({ everyEvents: 1, maxTimeShare: 1 });
    expect(await restarted.store.getCheckpoint(CHECKPOINT)).toBeNull();
    expect(lines).toContainEqual(
      `warn: Ignoring the read models' snapshot ${file()}: it holds no checkpoint; rebuilding them from the events`,
    );
  });

  it('names both stores when a snapshot is of another, or when DATA_DIR has none', async () => {
    await registerCustomers(1, 2);
    const first = await observed({ everyEvents: 1, maxTimeShare: 1 });
    await first.apply(2);
    await first.snapshots.stop();
    attached.splice(0);
    const taken = readFileSync(join(dir, 'store-id'), 'utf8').trim();
    const other = randomUUID();

    writeFileSync(join(dir, 'store-id'), `${other}\n`);
    await observed({ everyEvents: 1, maxTimeShare: 1 });
    rmSync(join(dir, 'store-id'));
    await observed({ everyEvents: 1, maxTimeShare: 1 });
    expect(lines.filter((line) => line.startsWith('warn: '))).toEqual([
      `warn: Ignoring the read models' snapshot ${file()}: it was taken of store ${taken}, and this is store ${other}; rebuilding them from the events`,
      `warn: Ignoring the read models' snapshot ${file()}: it was taken of store ${taken}, and this is store (none); rebuilding them from the events`,
    ]);
  });

  it('warns of a snapshot it cannot open, other than a missing one', async () => {
    symlinkSync(SNAPSHOT_FILE, file());
    const { store } = await observed({ everyEvents: 1, maxTimeShare: 1 });
    expect(await store.getCheckpoint(CHECKPOINT)).toBeNull();
    expect(lines).toEqual([
      expect.stringMatching(/^warn: Ignoring the read models' snapshot .*ELOOP.*; rebuilding/),
    ]);
  });

  it('discards a snapshot: gone if there, nothing to do if not, and an error that is not "missing" thrown', async () => {
    writeFileSync(file(), 'a snapshot');
    await ReadModelSnapshots.discard(dir);
    expect(statSync(file(), { throwIfNoEntry: false })).toBeUndefined();
    await expect(ReadModelSnapshots.discard(dir)).resolves.not.toThrow();
    mkdirSync(file());
    await expect(ReadModelSnapshots.discard(dir)).rejects.toThrow(
      expect.objectContaining({ code: 'EISDIR' }),
    );
  });

  it('removes a snapshot durably, by a discard, a rebuild or an erasure: DATA_DIR is flushed once it is gone', async () => {
    // Each flush of DATA_DIR, and whether the snapshot was still there when it came.
    const flushes: boolean[] = [];
    const open = fs.open;
    jest.spyOn(fs, 'open').mockImplementation(async (...args: Parameters<typeof fs.open>) => {
      const handle = await open(...args);
      if (args[0] === dir) {
        const sync = handle.sync.bind(handle);
        handle.sync = () => {
          flushes.push(statSync(file(), { throwIfNoEntry: false }) !== undefined);
          return sync();
        };
      }
      return handle;
    });
    writeFileSync(file(), 'a snapshot');
    await ReadModelSnapshots.discard(dir);
    expect(flushes).toEqual([false]);

    await registerCustomers(1, 3);
    const { apply, store, snapshots } = await observed({ everyEvents: 1, maxTimeShare: 1 });
    await apply(1);
    await snapshots.settled();
    flushes.splice(0);
    const rebuilt = new MemoryReadStore();
    await rebuilt.applyBatch([], { projection: CHECKPOINT, position: position(1) });
    expect(store.adopt(rebuilt, CHECKPOINT)).toBe(true);
    await snapshots.settled();
    // The removal's flush, then the write of the new models (due every event).
    expect(flushes).toEqual([false, true]);

    await apply(2);
    await snapshots.settled();
    expect(statSync(file(), { throwIfNoEntry: false })).toBeDefined();
    flushes.splice(0);
    await store.applyBatch([{ collection: 'customers', id: 1, position: position(3), remove: true }], {
      projection: CHECKPOINT,
      position: position(3),
    });
    await snapshots.settled();
    expect(flushes).toEqual([false, true]);
    expect(written()).toEqual([
      expect.stringContaining('written at position 1:'),
      expect.stringContaining('written at position 1:'),
      expect.stringContaining('written at position 2:'),
      expect.stringContaining('written at position 3:'),
    ]);
  });

  it('a write that cannot replace the snapshot logs an error and leaves no temporary file; so does a rebuild that cannot remove it', async () => {
    await registerCustomers(1, 2);
    mkdirSync(file());
    // At a share of one half, the failure is tried again 1 s later: after this test's checks.
    const { store, apply, snapshots } = await observed({ everyEvents: 1, maxTimeShare: 0.5 });
    await apply(2);
    await snapshots.settled();
    expect(errors()).toEqual([
      expect.stringMatching(
        /^error: Writing the read models' snapshot failed: .*EISDIR.*; a restart replays more events, nothing is lost$/,
      ),
    ]);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);

    const rebuilt = new MemoryReadStore();
    await rebuilt.applyBatch([], { projection: CHECKPOINT, position: position(2) });
    expect(store.adopt(rebuilt, CHECKPOINT)).toBe(true);
    await snapshots.settled();
    expect(errors()[1]).toMatch(
      new RegExp(`^error: Could not remove .*${SNAPSHOT_FILE} after a rebuild: .*EISDIR`),
    );
  });

  it('a graceful stop writes a last snapshot when the models are ahead of it, and none when they are not', async () => {
    await registerCustomers(1, 4);
    const ahead = await observed({ everyEvents: 10, maxTimeShare: 1 });
    await ahead.apply(3);
    await ahead.snapshots.settled();
    expect(written()).toEqual([]);
    await ahead.snapshots.stop();
    expect(written()).toEqual([expect.stringContaining('written at position 3:')]);
    // Stopped, and detached: later batches write nothing.
    await ahead.apply(4);
    await ahead.snapshots.stop();
    expect(written()).toHaveLength(1);

    const level = await observed({ everyEvents: 1, maxTimeShare: 1 });
    await level.apply(4);
    await level.snapshots.settled();
    expect(written()).toHaveLength(2);
    await level.snapshots.stop();
    expect(written()).toHaveLength(2);
  });

  it('a stop during a write waits for it, then writes the batches it did not cover, once', async () => {
    await registerCustomers(1, 3);
    fakeClock();
    const fed: { store?: MemoryReadStore; late?: Promise<void> } = {};
    // The anchor read runs while the write holds the batches: this batch is applied after it.
    const eventStore = slowAnchorReads(0, () => {
      fed.late ??= fed.store!.applyBatch([], { projection: CHECKPOINT, position: position(3) });
    });
    const observing = await observed({ everyEvents: 1, maxTimeShare: 0.5 }, { eventStore });
    fed.store = observing.store;
    await observing.apply(1);
    await observing.snapshots.stop();
    await fed.late;
    await observing.snapshots.settled();
    expect(written()).toEqual([
      expect.stringContaining('written at position 1:'),
      expect.stringContaining('written at position 3:'),
    ]);
  });

  it('after a write, waits out the pause its duration calls for, then writes a store gone quiet', async () => {
    await registerCustomers(1, 3);
    fakeClock();
    jest.advanceTimersByTime(10_000);
    // Each write takes 200 ms, so at a share of one half the next waits 200 ms after it.
    const { apply, snapshots } = await observed(
      { everyEvents: 1, maxTimeShare: 0.5 },
      { eventStore: slowAnchorReads(200) },
    );
    await apply(1);
    await snapshots.settled();
    expect(written()).toHaveLength(1);
    expect(jest.getTimerCount()).toBe(0);

    jest.advanceTimersByTime(50);
    await apply(2);
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(149);
    await snapshots.settled();
    expect(written()).toHaveLength(1);
    jest.advanceTimersByTime(1);
    await snapshots.settled();
    expect(written()).toEqual([expect.anything(), expect.stringContaining('written at position 2:')]);
  });

  it('sets no timer while too few events have been applied', async () => {
    fakeClock();
    const { apply, snapshots } = await observed({ everyEvents: 5, maxTimeShare: 0.5 });
    await apply(1);
    await snapshots.settled();
    expect(jest.getTimerCount()).toBe(0);
    expect(written()).toEqual([]);
  });

  it('tries a failed write again no sooner than a long write would allow', async () => {
    await registerCustomers(1, 2);
    fakeClock();
    jest.advanceTimersByTime(10_000);
    const storeId = readFileSync(join(dir, 'store-id'));
    rmSync(join(dir, 'store-id'));
    const { apply, snapshots } = await observed({ everyEvents: 1, maxTimeShare: 0.5 });
    await apply(1);
    await snapshots.settled();
    expect(errors()).toEqual([
      "error: Writing the read models' snapshot failed: DATA_DIR has no store-id; a restart replays more events, nothing is lost",
    ]);
    // A failure counts as a write of 1 s: at a share of one half, the next waits 1 s.
    expect(jest.getTimerCount()).toBe(1);
    writeFileSync(join(dir, 'store-id'), storeId);
    jest.advanceTimersByTime(999);
    await snapshots.settled();
    expect(written()).toEqual([]);
    jest.advanceTimersByTime(1);
    await snapshots.settled();
    expect(written()).toEqual([expect.stringContaining('written at position 1:')]);
    expect(errors()).toHaveLength(1);
  });

  it('removes the temporary files of an earlier process that had its pid (a container restarted)', async () => {
    const mine = join(dir, `${SNAPSHOT_FILE}.${process.pid}.abcd.tmp`);
    writeFileSync(mine, 'partial');
    await observed({ everyEvents: 1, maxTimeShare: 1 });
    expect(statSync(mine, { throwIfNoEntry: false })).toBeUndefined();
  });

  it('closes every file it opens, writing and restoring', async () => {
    await registerCustomers(1, 2);
    const open = () => readdirSync('/proc/self/fd').length;
    const before = open();
    const first = await observed({ everyEvents: 1, maxTimeShare: 1 });
    await first.apply(2);
    await first.snapshots.stop();
    attached.splice(0);
    const restarted = await observed({ everyEvents: 1, maxTimeShare: 1 });
    expect(await restarted.store.getCheckpoint(CHECKPOINT)).toEqual(position(2));
    expect(open()).toBe(before);
  });
});

function mutated(bytes: Buffer, damage: (bytes: Buffer) => unknown): Buffer {
  const copy = Buffer.from(bytes);
  const result = damage(copy);
  return result instanceof Buffer ? result : copy;
}
