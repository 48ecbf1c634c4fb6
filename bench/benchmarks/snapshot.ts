/**
 * The read models' snapshot of 1,000,000 customers, in this process on the built modules (dist/):
 * how long it takes to read back, and what writing one costs the server meanwhile (how long the
 * projection batches wait, how long the event loop is held).
 */
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { customersDataSet } from '../support/datasets';
import { figure } from '../support/report';
import { spread } from '../support/stats';
import type { Benchmark } from './benchmark';

const DIST = join(__dirname, '..', '..', 'dist');
const CUSTOMERS = 1_000_000;
const ROUNDS = 3;
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

export const snapshot: Benchmark = {
  name: 'snapshot',
  title: `the read models' snapshot of ${CUSTOMERS.toLocaleString('en')} customers: read back, and written while serving`,
  async run() {
    const { SqliteEventStore } = (await import(
      join(DIST, 'libs/event-store/src/index.js')
    )) as typeof import('@chronicle/event-store');
    const models = (await import(
      join(DIST, 'libs/read-models/src/index.js')
    )) as typeof import('@chronicle/read-models');
    const codec = (await import(
      join(DIST, 'libs/read-models/src/memory/snapshot/snapshot-codec.js')
    )) as typeof import('../../libs/read-models/src/memory/snapshot/snapshot-codec');
    const dataSet = await customersDataSet(CUSTOMERS);
    const events = SqliteEventStore.open(dataSet.dir);
    const restores: number[] = [];
    const writes: number[] = [];
    const held: number[] = [];
    const delayMax: number[] = [];
    const delayP99: number[] = [];
    try {
      let store = new models.MemoryReadStore();
      for (let round = 0; round < ROUNDS; round++) {
        await store.close();
        store = new models.MemoryReadStore();
        const snapshots = new models.ReadModelSnapshots(store, events, {
          dataDir: dataSet.dir,
          checkpointName: models.READ_MODELS_CHECKPOINT,
          logger: quiet,
        });
        const restoring = performance.now();
        await snapshots.restore();
        restores.push(performance.now() - restoring);
        await snapshots.stop();
        if ((await store.getCheckpoint(models.READ_MODELS_CHECKPOINT)) === null) {
          throw new Error(`No snapshot in ${dataSet.dir}: run the restart benchmark first`);
        }
        // A write as the server makes it, into a scratch file, the event loop watched meanwhile.
        const file = join(dataSet.dir, `bench-snapshot-${process.pid}.tmp`);
        const handle = await open(file, 'w', 0o600);
        const delay = monitorEventLoopDelay({ resolution: 1 });
        delay.enable();
        const writing = performance.now();
        try {
          await store.holdStill(async (image) => {
            const start = performance.now();
            await codec.encodeSnapshot(image, { storeId: 'bench', anchorEventId: null }, async (chunk) => {
              for (let at = 0; at < chunk.byteLength;) {
                at += (await handle.write(chunk, at, chunk.byteLength - at)).bytesWritten;
              }
            });
            held.push(performance.now() - start);
          });
          await handle.sync();
        } finally {
          await handle.close();
          await unlink(file);
        }
        writes.push(performance.now() - writing);
        delay.disable();
        delayMax.push(delay.max / 1e6);
        delayP99.push(delay.percentile(99) / 1e6);
      }
      await store.close();
    } finally {
      await events.close();
    }
    const ms = (values: number[]) => spread(values);
    return {
      name: this.name,
      title: this.title,
      figures: [
        figure({ name: 'read back (decode, check, restore)', unit: 'ms', value: ms(restores) }),
        figure({ name: 'write (to fsync)', unit: 'ms', value: ms(writes) }),
        figure({ name: 'projection batches held during a write', unit: 'ms', value: ms(held) }),
        figure({ name: 'event loop delay during a write, max', unit: 'ms', value: ms(delayMax) }),
        figure({ name: 'event loop delay during a write, p99', unit: 'ms', value: ms(delayP99) }),
      ],
      notes: [
        `${ROUNDS} rounds on the restart benchmark's data set and snapshot (BENCH_KEEP_DATA keeps them): each reads ` +
          'the snapshot back through ReadModelSnapshots (digest, store-id, the event at its checkpoint), then ' +
          'writes it out again as the server does, hashing in 4 MiB steps and yielding between them.',
        'Batches wait only while the contents are written out; the fsync comes after. Reported, not judged.',
      ],
    };
  },
};
