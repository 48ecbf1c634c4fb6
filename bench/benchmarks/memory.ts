import { setTimeout as sleep } from 'node:timers/promises';
import { parseConfig } from '@chronicle/config';
import { openEventStore } from '@chronicle/event-store';
import { ReadModelSnapshots } from '@chronicle/read-models';
import { customersDataSet } from '../support/datasets';
import { RunningProcess, startServer } from '../support/processes';
import { type Figure, figure, single } from '../support/report';
import { spread, Spread } from '../support/stats';
import type { Benchmark } from './benchmark';

const CUSTOMERS = 1_000_000;
/**
 * How long a server is left alone before its at-rest samples. V8 gives back the garbage of a
 * start's work (the replay, the background walk of the hash chain, which at 2,000,000 events ends
 * about 30 s after ready) only through its memory reducer, and on a server that is quiet but not
 * idle (timers, polls) that runs by the reducer's watchdog: 100 s after the last garbage
 * collection (V8's `MemoryReducer::kWatchdogDelayMs`). Measured on 300,000 customers: 549 MiB
 * until then, 345 MiB after, from 85 s after ready on.
 */
export const REST_MS = 180_000;
export const MIB = 2 ** 20;

/**
 * The customers as GET /customers serves them, one JSON document each, in bytes of UTF-8. Read
 * through the store's decrypting read path, as the server reads them: the stored names and
 * addresses are ciphertext, about twice as long as what a server holds.
 */
export async function customersJsonBytes(dir: string): Promise<number> {
  const store = await openEventStore(parseConfig({ DATA_DIR: dir }));
  let bytes = 0;
  try {
    for await (const event of store.readAll()) {
      if (event.type !== 'CustomerRegistered.v1') continue;
      const data = event.data as { customerId: number; name: string; email: string; createdon: string };
      bytes += Buffer.byteLength(
        JSON.stringify({
          id: data.customerId,
          name: data.name,
          email: data.email,
          createdon: data.createdon,
        }),
      );
    }
  } finally {
    await store.close();
  }
  return bytes;
}

/** RSS in MiB, once a second for 5 s. */
async function sampleRss(server: RunningProcess): Promise<Spread> {
  const samples: number[] = [];
  for (let sample = 0; sample < 5; sample++) {
    await sleep(1000);
    samples.push(server.rss() / MIB);
  }
  return spread(samples);
}

/** RSS in MiB just after the server is ready, then at rest (REST_MS later): what it holds. */
export async function readyAndRestingRss(
  server: RunningProcess,
): Promise<{ afterReady: Spread; atRest: Spread }> {
  const afterReady = await sampleRss(server);
  await sleep(REST_MS);
  return { afterReady, atRest: await sampleRss(server) };
}

/**
 * The two RSS figures against the customers as JSON: at rest (the target's, <= 2) and just after
 * ready (reported only), under the names given.
 */
export function rssFigures(
  rss: { afterReady: Spread; atRest: Spread },
  jsonBytes: number,
  names: { atRest: string; afterReady: string },
): Figure[] {
  const ceiling = { name: 'the customers as JSON', value: single(jsonBytes / MIB) };
  return [
    figure({
      name: names.atRest,
      unit: 'MiB',
      value: rss.atRest,
      ceiling,
      ratio: rss.atRest.median / (jsonBytes / MIB),
      target: { kind: '<=', bound: 2 },
    }),
    figure({
      name: names.afterReady,
      unit: 'MiB',
      value: rss.afterReady,
      ceiling,
      ratio: rss.afterReady.median / (jsonBytes / MIB),
    }),
  ];
}

export const memory: Benchmark = {
  name: 'memory',
  title: `RSS of the server holding ${CUSTOMERS.toLocaleString('en')} customers (embedded default)`,
  async run() {
    const dataSet = await customersDataSet(CUSTOMERS);
    const jsonBytes = await customersJsonBytes(dataSet.dir);
    // A start that replays every event (a restart from the snapshot is the restart benchmark's).
    await ReadModelSnapshots.discard(dataSet.dir);
    const server = await startServer(dataSet.dir);
    let afterReplay: Spread;
    let atRest: Spread;
    try {
      ({ afterReady: afterReplay, atRest } = await readyAndRestingRss(server));
    } finally {
      await server.stop();
    }
    return {
      name: this.name,
      title: this.title,
      figures: [
        ...rssFigures({ afterReady: afterReplay, atRest }, jsonBytes, {
          atRest: 'resident set size at rest',
          afterReady: 'resident set size just after the replay',
        }),
      ],
      notes: [
        'A start without the read models’ snapshot: every event replayed. The whole process (Node, Nest, code) counts.',
        `RSS sampled once a second for 5 s: just after /health/ready turned 200 (the replay’s garbage still held), and again ${REST_MS / 1000} s later, at rest.`,
      ],
    };
  },
};
