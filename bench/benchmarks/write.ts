import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import { SqliteEventStore } from '@chronicle/event-store';
import type { HarnessStats } from '../harness/api-harness';
import { adminDataSet, bearerToken, seedUsers } from '../support/datasets';
import { load, ROUND_SECONDS, ROUNDS, WARMUP_SECONDS } from '../support/load';
import { chronicleEnv, ROOT, startTsProcess } from '../support/processes';
import { figure, single } from '../support/report';
import { percentile, type Spread, spread } from '../support/stats';
import type { Benchmark } from './benchmark';

const USERS = 1_000;
const CONNECTIONS = 64;

interface WriteRun {
  patches: Spread;
  appends: Spread;
  fsyncsPerRequest: Spread;
  lagP50: Spread;
  lagP99: Spread;
  lagMax: Spread;
  lagSamples: number;
}

/** PATCHes on every user in turn, each changing the age so that every one appends an event. */
function patches(token: string, userIds: string[]): autocannon.Request[] {
  let next = 0;
  return [
    {
      method: 'PATCH',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/merge-patch+json',
      },
      setupRequest: (request) => {
        const index = next++;
        return {
          ...request,
          path: `/users/${userIds[index % userIds.length]}`,
          body: JSON.stringify({ age: 18 + (Math.floor(index / userIds.length) % 80) }),
        };
      },
    },
  ];
}

/**
 * The ceiling: one single-event transaction after another, each awaited, through the same store
 * code with the same durability (WAL, synchronous=FULL) on the same disk, in a file beside the
 * server's. Events the size and shape of a UserPatched, on as many streams.
 */
async function sequentialAppends(
  store: SqliteEventStore,
  seconds: number,
  revisions: number[],
): Promise<number> {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let appended = 0;
  while (performance.now() < deadline) {
    const index = appended % revisions.length;
    const userId = `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`;
    const now = new Date().toISOString();
    const result = await store.append(
      `user-${userId}`,
      [
        {
          id: randomUUID(),
          type: 'UserPatched.v1',
          data: { userId, changes: { age: 18 + (appended % 80) }, modifiedon: now },
          metadata: { actor: randomUUID(), correlationId: randomUUID(), causationId: null, occurredAt: now },
        },
      ],
      revisions[index] < 0 ? 'no_stream' : revisions[index],
    );
    revisions[index] = result.nextExpectedRevision;
    appended++;
  }
  return appended / ((performance.now() - started) / 1000);
}

let writeRun: Promise<WriteRun> | null = null;

/** One run serves both write and lag: the lag is measured under this very load. */
function measure(): Promise<WriteRun> {
  writeRun ??= (async () => {
    const dataSet = await adminDataSet('write');
    const userIds = await seedUsers(dataSet.dir, USERS);
    const harness = await startTsProcess(
      join(ROOT, 'bench/harness/api-harness.ts'),
      chronicleEnv(dataSet.dir),
      '/health/ready',
    );
    const ceilingStore = SqliteEventStore.open(join(dataSet.dir, 'ceiling'));
    const stats = async (): Promise<HarnessStats> => {
      harness.child.send('stats');
      const [message] = (await once(harness.child, 'message')) as [HarnessStats];
      return message;
    };
    try {
      const token = await bearerToken(harness.url);
      const target = {
        name: 'PATCH /users/{id}',
        options: { url: harness.url, connections: CONNECTIONS, requests: patches(token, userIds) },
      };
      const revisions = new Array<number>(USERS).fill(-1);
      await sequentialAppends(ceilingStore, WARMUP_SECONDS, revisions);
      await load(target, WARMUP_SECONDS);
      const rounds: { appends: number; patches: number; fsyncs: number; lags: number[] }[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const appends = await sequentialAppends(ceilingStore, ROUND_SECONDS, revisions);
        const before = await stats();
        const result = await load(target, ROUND_SECONDS);
        const after = await stats();
        rounds.push({
          appends,
          patches: result['2xx'] / result.duration,
          fsyncs: (after.commits - before.commits) / result['2xx'],
          lags: after.lags,
        });
      }
      const withLags = rounds.filter((round) => round.lags.length > 0);
      return {
        patches: spread(rounds.map((round) => round.patches)),
        appends: spread(rounds.map((round) => round.appends)),
        fsyncsPerRequest: spread(rounds.map((round) => round.fsyncs)),
        lagP50: spread(withLags.map((round) => percentile(round.lags, 0.5))),
        lagP99: spread(withLags.map((round) => percentile(round.lags, 0.99))),
        lagMax: spread(withLags.map((round) => percentile(round.lags, 1))),
        lagSamples: withLags.reduce((sum, round) => sum + round.lags.length, 0),
      };
    } finally {
      await ceilingStore.close();
      await harness.stop();
    }
  })();
  return writeRun;
}

export const write: Benchmark = {
  name: 'write',
  title: `PATCH /users/{id} on ${USERS.toLocaleString('en')} users, ${CONNECTIONS} connections, embedded store (WAL, synchronous=FULL)`,
  async run() {
    const run = await measure();
    return {
      name: this.name,
      title: this.title,
      figures: [
        figure({
          name: 'PATCH requests/s',
          unit: 'req/s',
          value: run.patches,
          ceiling: {
            name: 'sequential single-event appends/s, same store and durability',
            value: run.appends,
          },
          ratio: run.patches.median / run.appends.median,
          target: { kind: '>=', bound: 1 },
        }),
        figure({ name: 'fsyncs (commits) per PATCH', unit: '', value: run.fsyncsPerRequest }),
        figure({ name: 'fsyncs per sequential append (ceiling)', unit: '', value: single(1) }),
      ],
      notes: [
        'Ceiling and PATCH rounds alternate; the server is idle while the ceiling runs.',
        'The server runs in the bench harness (bench/harness/api-harness.ts): the built app plus a commit counter.',
      ],
    };
  },
};

export const lag: Benchmark = {
  name: 'lag',
  title: 'PATCH response to change visible in the read model, under the write load',
  async run() {
    const run = await measure();
    return {
      name: this.name,
      title: this.title,
      figures: [
        figure({ name: 'p50 lag', unit: 'ms', value: run.lagP50 }),
        figure({
          name: 'p99 lag',
          unit: 'ms',
          value: run.lagP99,
          ratio: run.lagP99.median,
          target: { kind: '<', bound: 50 },
        }),
        figure({ name: 'max lag', unit: 'ms', value: run.lagMax }),
      ],
      notes: [
        `${run.lagSamples.toLocaleString('en')} PATCHes matched to their read-model change, in the server process ` +
          '(the ratio column is the p99 itself, in ms).',
      ],
    };
  },
};
