import { setTimeout as sleep } from 'node:timers/promises';
import { parseConfig } from '@chronicle/config';
import { openEventStore } from '@chronicle/event-store';
import { ReadModelSnapshots } from '@chronicle/read-models';
import { customersDataSet } from '../support/datasets';
import { RunningProcess, startServer } from '../support/processes';
import { figure, single } from '../support/report';
import { spread, Spread } from '../support/stats';
import type { Benchmark } from './benchmark';

const CUSTOMERS = 1_000_000;
/** How long the server is left alone before the at-rest samples. */
const REST_MS = 60_000;
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

/** RSS in MiB, once a second for 5 s: start-up's garbage has had time to go. */
export async function sampleRss(server: RunningProcess): Promise<Spread> {
  const samples: number[] = [];
  for (let sample = 0; sample < 5; sample++) {
    await sleep(1000);
    samples.push(server.rss() / MIB);
  }
  return spread(samples);
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
      afterReplay = await sampleRss(server);
      // V8 returns the replay's garbage once the heap has been quiet a while (its memory reducer,
      // about 30 s here): what the server holds from then on is the at-rest figure.
      await sleep(REST_MS);
      atRest = await sampleRss(server);
    } finally {
      await server.stop();
    }
    const ceiling = { name: 'the customers as JSON', value: single(jsonBytes / MIB) };
    return {
      name: this.name,
      title: this.title,
      figures: [
        figure({
          name: 'resident set size at rest',
          unit: 'MiB',
          value: atRest,
          ceiling,
          ratio: atRest.median / (jsonBytes / MIB),
          target: { kind: '<=', bound: 2 },
        }),
        figure({
          name: 'resident set size just after the replay',
          unit: 'MiB',
          value: afterReplay,
          ceiling,
          ratio: afterReplay.median / (jsonBytes / MIB),
        }),
      ],
      notes: [
        'A start without the read models’ snapshot: every event replayed. The whole process (Node, Nest, code) counts.',
        `RSS sampled once a second for 5 s: just after /health/ready turned 200 (the replay’s garbage still held), and again ${REST_MS / 1000} s later, at rest.`,
      ],
    };
  },
};
