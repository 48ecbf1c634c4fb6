import { SqliteEventStore } from '@chronicle/event-store';
import { ReadModelSnapshots } from '@chronicle/read-models';
import { baselineBuild } from '../support/baseline';
import { customersDataSet, type DataSet, eventStoreOf } from '../support/datasets';
import { positiveEnv, ROUNDS } from '../support/load';
import { type Build, CURRENT, type RunningProcess, runCli, startServer } from '../support/processes';
import { type Figure, figure, ratioFigure, single } from '../support/report';
import { spread } from '../support/stats';
import type { Benchmark } from './benchmark';

/** BENCH_CUSTOMERS: fewer for a trial (rebuild and restart); 1,000,000 is what their targets are stated on. */
export const CUSTOMERS = positiveEnv('BENCH_CUSTOMERS', 1_000_000);
/** A rebuild of a million events takes long enough that three rounds say what five would. */
const REBUILD_ROUNDS = Math.min(ROUNDS, 3);

interface BuildRun {
  build: Build;
  dataSet: DataSet;
  server: RunningProcess;
  /** The events in its store. */
  events: number;
  /** Its store's events per second of rebuild, one per round. */
  rates: number[];
}

/**
 * The ceiling: every event read from the store and its JSON parsed, nothing projected. With a
 * baseline `build`, by its own store code (from its dist/).
 */
export async function readAndParse(
  dir: string,
  build?: Build,
): Promise<{ events: number; perSecond: number }> {
  const store = (build === undefined ? SqliteEventStore : (await eventStoreOf(build)).SqliteEventStore).open(
    dir,
  );
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

/** Issue 35: the rebuild rate at least 0.8 of the build's before personal values were encrypted. */
function againstBaseline(before: BuildRun, current: BuildRun): Figure[] {
  const baseline = (value: Figure['value']) => ({ name: `the ${before.build.name} build`, value });
  return [
    ratioFigure({
      name: 'rebuild, store events/s, current over baseline',
      unit: 'events/s',
      value: spread(current.rates),
      ceiling: baseline(spread(before.rates)),
      target: { kind: '>=', bound: 0.8 },
    }),
    ratioFigure({
      name: 'server start-up to ready, current over baseline',
      unit: 's',
      value: single(current.server.startupMs / 1000),
      ceiling: baseline(single(before.server.startupMs / 1000)),
    }),
  ];
}

export const rebuild: Benchmark = {
  name: 'rebuild',
  title: `projections rebuild of ${CUSTOMERS.toLocaleString('en')} customers (twice as many events), and server start-up on that store`,
  async run() {
    const baseline = await baselineBuild();
    // The baseline first in every round (A, B, A, B...), each on the store its own CLI seeded.
    const builds: Build[] = baseline ? [baseline, CURRENT] : [CURRENT];
    const runs: BuildRun[] = [];
    const ceiling: number[] = [];
    let replayed = 0;
    try {
      for (const build of builds) {
        const dataSet = await customersDataSet(CUSTOMERS, build);
        // Start-up replays every event (a restart from the snapshot is the restart benchmark's).
        await ReadModelSnapshots.discard(dataSet.dir);
        // The current build's store is counted by the ceiling's reads, in every round.
        const events = build === CURRENT ? 0 : (await readAndParse(dataSet.dir, build)).events;
        runs.push({
          build,
          dataSet,
          server: await startServer(dataSet.dir, {}, [], build),
          events,
          rates: [],
        });
      }
      for (let round = 0; round < REBUILD_ROUNDS; round++) {
        for (const run of runs) {
          if (run.build === CURRENT) {
            const read = await readAndParse(run.dataSet.dir);
            ceiling.push(read.perSecond);
            run.events = read.events;
          }
          // On the embedded default the CLI asks the running server to rebuild its in-memory models.
          const outputs = (await runCli(
            run.dataSet.dir,
            ['projections', 'rebuild'],
            run.build,
          )) as RebuildOutput[];
          const result = outputs.find((output) => typeof output.seconds === 'number');
          if (!result) throw new Error(`projections rebuild printed no figures: ${JSON.stringify(outputs)}`);
          // The store's events over the rebuild's time, as for the ceiling: the rebuild reads only
          // the event types its projections use, so it replays fewer than the store holds.
          run.rates.push(run.events / result.seconds);
          if (run.build === CURRENT) replayed = result.events;
        }
      }
    } finally {
      await Promise.all(runs.map((run) => run.server.stop()));
    }
    const current = runs[runs.length - 1];
    const before = runs.length > 1 ? runs[0] : null;
    const server = current.server;
    const events = current.events;
    const rebuilds = current.rates;
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
        ...(before ? againstBaseline(before, current) : []),
      ],
      ...(before ? { baseline: before.build.commit } : {}),
      notes: [
        ...(before
          ? [
              `Against the ${before.build.name} build (BENCH_BASELINE): its own server on the store its own CLI ` +
                `seeded (${before.events.toLocaleString('en')} events), rebuilt by its own CLI just before ours in ` +
                'every round; its rate is its store’s events over its rebuild’s time. Start-up: one start each.',
            ]
          : []),
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
