import { statSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { ReadModelSnapshots, SNAPSHOT_FILE } from '@chronicle/read-models';
import { baselineBuild } from '../support/baseline';
import { customersDataSet } from '../support/datasets';
import { type Build, startServer } from '../support/processes';
import { type Figure, figure, ratioFigure, single } from '../support/report';
import { spread, Spread } from '../support/stats';
import type { Benchmark } from './benchmark';
import { customersJsonBytes, MIB, readyAndRestingRss, REST_MS, rssFigures } from './memory';
import { CUSTOMERS, readAndParse } from './rebuild';
/** Restarts measured; each is a few seconds, the first start (a full replay) much longer. */
const RESTARTS = 3;

/** The first start of `build` on its own data set (every event replayed); its stop writes the snapshot. */
async function firstStart(build: Build): Promise<{ build: Build; dir: string; startupMs: number }> {
  const { dir } = await customersDataSet(CUSTOMERS, build);
  await ReadModelSnapshots.discard(dir);
  const server = await startServer(dir, {}, [], build);
  await server.stop();
  return { build, dir, startupMs: server.startupMs };
}

export const restart: Benchmark = {
  name: 'restart',
  title: `server restart on ${CUSTOMERS.toLocaleString('en')} customers (twice as many events), from the read models' snapshot`,
  async run() {
    const load = loadavg()[0];
    const baseline = await baselineBuild();
    const dataSet = await customersDataSet(CUSTOMERS);
    const jsonBytes = await customersJsonBytes(dataSet.dir);
    // The first start replays every event (no snapshot yet); its graceful stop leaves the snapshot.
    await ReadModelSnapshots.discard(dataSet.dir);
    const first = await startServer(dataSet.dir);
    await first.stop();
    const snapshotBytes = statSync(join(dataSet.dir, SNAPSHOT_FILE)).size;
    // BENCH_BASELINE: the baseline build's server on the store its own CLI seeded, its snapshot
    // written by its own first start, restarted just before ours in every round (A, B, A, B...).
    const before = baseline ? await firstStart(baseline) : null;
    const baselineReady: number[] = [];
    const baselineListening: number[] = [];

    const ceiling: number[] = [];
    const listening: number[] = [];
    const ready: number[] = [];
    let resident: { afterReady: Spread; atRest: Spread } | null = null;
    let events = 0;
    for (let round = 0; round < RESTARTS; round++) {
      const read = await readAndParse(dataSet.dir);
      events = read.events;
      ceiling.push(read.events / read.perSecond);
      if (before) {
        const server = await startServer(before.dir, {}, [], before.build);
        baselineListening.push(server.listeningMs / 1000);
        baselineReady.push(server.startupMs / 1000);
        await server.stop();
      }
      const server = await startServer(dataSet.dir);
      try {
        listening.push(server.listeningMs / 1000);
        ready.push(server.startupMs / 1000);
        if (round === RESTARTS - 1) resident = await readyAndRestingRss(server);
      } finally {
        await server.stop();
      }
    }
    const readSeconds = spread(ceiling);
    const toListening = spread(listening);
    const toReady = spread(ready);
    const againstBaseline: Figure[] = before
      ? [
          ratioFigure({
            name: 'restart to ready, current over baseline',
            unit: 's',
            value: toReady,
            ceiling: { name: `the ${before.build.name} build`, value: spread(baselineReady) },
            target: { kind: '<=', bound: 1.1 },
          }),
          ratioFigure({
            name: 'restart to listening, current over baseline',
            unit: 's',
            value: toListening,
            ceiling: { name: `the ${before.build.name} build`, value: spread(baselineListening) },
          }),
          ratioFigure({
            name: 'first start (no snapshot) to ready, current over baseline',
            unit: 's',
            value: single(first.startupMs / 1000),
            ceiling: { name: `the ${before.build.name} build`, value: single(before.startupMs / 1000) },
          }),
        ]
      : [];
    return {
      name: this.name,
      title: this.title,
      ...(before ? { baseline: before.build.commit } : {}),
      figures: [
        ...againstBaseline,
        figure({
          name: 'restart to listening',
          unit: 's',
          value: toListening,
          ratio: toListening.median,
          target: { kind: '<', bound: 1 },
        }),
        figure({
          name: 'restart to ready',
          unit: 's',
          value: toReady,
          ceiling: { name: 'read and parse every event', value: readSeconds },
          ratio: toReady.median / readSeconds.median,
          target: { kind: '<=', bound: 0.25 },
        }),
        figure({
          name: 'first start (no snapshot) to ready',
          unit: 's',
          value: single(first.startupMs / 1000),
          ceiling: { name: 'read and parse every event', value: readSeconds },
          ratio: first.startupMs / 1000 / readSeconds.median,
        }),
        ...rssFigures(resident!, jsonBytes, {
          atRest: 'resident set size after a restart, at rest',
          afterReady: 'resident set size just after a restart',
        }),
        figure({
          name: "read models' snapshot",
          unit: 'MiB',
          value: single(snapshotBytes / MIB),
          ceiling: { name: 'the customers as JSON', value: single(jsonBytes / MIB) },
          ratio: snapshotBytes / jsonBytes,
        }),
      ],
      notes: [
        ...(before
          ? [
              `Against the ${before.build.name} build (BENCH_BASELINE): its server on the store its own CLI seeded, ` +
                'from the snapshot its own first start wrote, restarted just before ours in every round.',
            ]
          : []),
        `${events.toLocaleString('en')} events. A first start replays them all and its graceful stop writes the ` +
          `snapshot; then ${RESTARTS} restarts, each after a read of every event with its JSON parsed (the ceiling).`,
        'Listening: spawn to the first answer of /health/ready (503 while catching up); ready: to its first 200. ' +
          'The ratio of the listening row is the time itself, in s.',
        `RSS sampled once a second for 5 s after the last restart was ready (the walk of the hash chain still running), and again ${REST_MS / 1000} s later, at rest (the target's figure; see the memory benchmark).`,
        `Load average when the run began: ${load.toFixed(1)} on ${availableParallelism()} shared cores ` +
          '(the ceiling is measured in the same run, under the same load).',
      ],
    };
  },
};
