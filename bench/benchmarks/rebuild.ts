import { SqliteEventStore } from '@chronicle/event-store';
import { ReadModelSnapshots } from '@chronicle/read-models';
import { customersDataSet } from '../support/datasets';
import { ROUNDS } from '../support/load';
import { runCli, startServer } from '../support/processes';
import { figure, single } from '../support/report';
import { spread } from '../support/stats';
import type { Benchmark } from './benchmark';

const CUSTOMERS = 1_000_000;
/** A rebuild of a million events takes long enough that three rounds say what five would. */
const REBUILD_ROUNDS = Math.min(ROUNDS, 3);

/** The ceiling: every event read from the store and its JSON parsed, nothing projected. */
export async function readAndParse(dir: string): Promise<{ events: number; perSecond: number }> {
  const store = SqliteEventStore.open(dir);
  try {
    const started = performance.now();
    let events = 0;
    // readAll parses each event's data and metadata (JSON.parse) as it yields it.
    for await (const event of store.readAll()) if (event.data !== null) events++;
    return { events, perSecond: events / ((performance.now() - started) / 1000) };
  } finally {
    await store.close();
  }
}

interface RebuildOutput {
  events: number;
  seconds: number;
  eventsPerSecond: number;
}

export const rebuild: Benchmark = {
  name: 'rebuild',
  title: `projections rebuild of ${CUSTOMERS.toLocaleString('en')} customers (twice as many events), and server start-up on that store`,
  async run() {
    const dataSet = await customersDataSet(CUSTOMERS);
    // Start-up replays every event (a restart from the snapshot is the restart benchmark's).
    ReadModelSnapshots.discard(dataSet.dir);
    const server = await startServer(dataSet.dir);
    const ceiling: number[] = [];
    const rebuilds: number[] = [];
    let events = 0;
    let replayed = 0;
    try {
      for (let round = 0; round < REBUILD_ROUNDS; round++) {
        const read = await readAndParse(dataSet.dir);
        ceiling.push(read.perSecond);
        events = read.events;
        // On the embedded default the CLI asks the running server to rebuild its in-memory models.
        const outputs = (await runCli(dataSet.dir, ['projections', 'rebuild'])) as RebuildOutput[];
        const result = outputs.find((output) => typeof output.seconds === 'number');
        if (!result) throw new Error(`projections rebuild printed no figures: ${JSON.stringify(outputs)}`);
        // The store's events over the rebuild's time, as for the ceiling: the rebuild reads only
        // the event types its projections use, so it replays fewer than the store holds.
        rebuilds.push(read.events / result.seconds);
        replayed = result.events;
      }
    } finally {
      await server.stop();
    }
    const rebuildRate = spread(rebuilds);
    const ceilingRate = spread(ceiling);
    return {
      name: this.name,
      title: this.title,
      figures: [
        figure({
          name: 'rebuild, store events/s',
          unit: 'events/s',
          value: rebuildRate,
          ceiling: { name: 'read every event and parse its JSON', value: ceilingRate },
          ratio: rebuildRate.median / ceilingRate.median,
          target: { kind: '>=', bound: 0.5 },
        }),
        figure({
          name: 'server start-up to ready',
          unit: 's',
          value: single(server.startupMs / 1000),
          ceiling: { name: 'read and parse every event', value: single(events / ceilingRate.median) },
          ratio: server.startupMs / 1000 / (events / ceilingRate.median),
        }),
      ],
      notes: [
        `${events.toLocaleString('en')} events; ${REBUILD_ROUNDS} rounds, ceiling and rebuild in turn, ` +
          'the rebuild run by `chronicle projections rebuild` against the running server.',
        `The rebuild replays the ${replayed.toLocaleString('en')} events its projections use; the store skips ` +
          'the others in SQL (here the customer number sequence). Both rates are the store’s events over each one’s time.',
        'Start-up: from spawning `node dist/apps/api/src/main.js` to the first 200 from /health/ready (one start, ' +
          'without the read models’ snapshot: every event replayed).',
      ],
    };
  },
};
