import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import { SqliteEventStore } from '@chronicle/event-store';
import type { HarnessStats } from '../harness/api-harness';
import { adminDataSet, bearerToken, seedUsers } from '../support/datasets';
import { ownCpuSeconds } from '../support/cpu';
import {
  compareLoads,
  type LoadComparison,
  loadFigures,
  type LoadTarget,
  loadNotes,
  ROUND_SECONDS,
  WARMUP_SECONDS,
} from '../support/load';
import { baselineBuild } from '../support/baseline';
import { type Build, chronicleEnv, CURRENT, ROOT, scratchDir, startTsProcess } from '../support/processes';
import { figure, single } from '../support/report';
import { percentile, type Spread, spread } from '../support/stats';
import type { Benchmark } from './benchmark';

const USERS = 1_000;
const CONNECTIONS = 64;
const PATCHES = 'PATCH /users/{id}';
const KEYED = 'PATCH /users/{id} with Idempotency-Key';
/** Replaced by the generator with an id of each request's own (LoadTarget.uniqueIds). */
const UNIQUE_KEY = '[<id>]';
const BARE = 'bare Fastify route appending the same event';
const APPENDS = 'sequential single-event appends/s, same store and durability';
/**
 * BENCH_WRITE=keyed: only the PATCHes with and without an Idempotency-Key (no bare route, no
 * sequential appends), for a quicker trial of the key's cost; the other write figures are left out.
 */
const KEYED_ONLY = process.env.BENCH_WRITE === 'keyed';

interface WriteRun {
  comparison: LoadComparison;
  /** The build the PATCHes were also measured on (BENCH_BASELINE), with their name in the comparison. */
  baseline: { build: Build; target: string } | null;
  /** None with BENCH_WRITE=keyed. */
  appends: { perSecond: Spread; cpuMs: Spread } | null;
  fsyncsPerRequest: Spread;
  lagP50: Spread;
  lagP99: Spread;
  lagMax: Spread;
  lagSamples: number;
}

interface PatchLists {
  /** Without a key: each connection walks its users twice, once per age, again and again. */
  plain(): autocannon.Request[][];
  /**
   * The same, each with an Idempotency-Key that is `[<id>]`: sent with `uniqueIds`, every request
   * carries a key of its own, never used before.
   */
  keyed(): autocannon.Request[][];
}

/**
 * PATCHes built before each load: one list per connection, each on its own users (so that no two
 * connections patch one user at once), every patch changing the age so that each appends an
 * event. A load alternates two ages of its own, none the load before used (the lists of one
 * server share the count): its first patch of a user changes the age too.
 */
function patches(token: string, userIds: string[]): PatchLists {
  let loads = 0;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/merge-patch+json' };
  const owned = Array.from({ length: CONNECTIONS }, (_, connection) =>
    userIds.filter((_, index) => index % CONNECTIONS === connection),
  );
  const patch = (userId: string, age: number, extra?: Record<string, string>): autocannon.Request => ({
    method: 'PATCH',
    path: `/users/${userId}`,
    headers: extra ? { ...headers, ...extra } : headers,
    body: JSON.stringify({ age }),
  });
  const lists = (extra?: Record<string, string>) => (): autocannon.Request[][] => {
    const base = 18 + ((2 * loads++) % 80);
    return owned.map((own) =>
      [base, base + 1].flatMap((age) => own.map((userId) => patch(userId, age, extra))),
    );
  };
  return { plain: lists(), keyed: lists({ 'idempotency-key': UNIQUE_KEY }) };
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
): Promise<{ perSecond: number; cpuMs: number }> {
  const cpuBefore = ownCpuSeconds();
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
  return {
    perSecond: appended / ((performance.now() - started) / 1000),
    cpuMs: (1000 * (ownCpuSeconds() - cpuBefore)) / appended,
  };
}

/** The first ceiling: the bare Fastify route in its own process, on its own store seeded alike. */
async function startBare(userIds: string[]) {
  const bareDir = scratchDir('write-bare');
  await seedUsers(bareDir, USERS, userIds);
  return startTsProcess(
    join(ROOT, 'bench/ceilings/bare-write-server.ts'),
    chronicleEnv(bareDir),
    '/health/ready',
  );
}

/**
 * The API server of `build` in the bench harness, on `dir`: the same harness, observers and
 * environment for every build, only the dist/ differs.
 */
function startHarness(dir: string, build: Build) {
  return startTsProcess(
    join(ROOT, 'bench/harness/api-harness.ts'),
    { ...chronicleEnv(dir), ...(build === CURRENT ? {} : { BENCH_DIST: join(build.root, 'dist') }) },
    '/health/ready',
  );
}

/** A harness's stats, asked over its IPC channel ('observe' and 'quiet' switch the lag observer). */
function statsOf(harness: Awaited<ReturnType<typeof startHarness>>) {
  return async (message: 'stats' | 'observe' | 'quiet'): Promise<HarnessStats> => {
    harness.child.send(message);
    const [answer] = (await once(harness.child, 'message')) as [HarnessStats];
    return answer;
  };
}

let writeRun: Promise<WriteRun> | null = null;

/** One run serves both write and lag: the lag is measured under this very load. */
function measure(): Promise<WriteRun> {
  writeRun ??= (async () => {
    const baseline = await baselineBuild();
    // Each build's users written by its own store code (the current one encrypts their values).
    const dataSet = await adminDataSet('write');
    const userIds = await seedUsers(dataSet.dir, USERS, undefined, CURRENT);
    const harness = await startHarness(dataSet.dir, CURRENT);
    const baselineHarness = baseline
      ? await (async () => {
          const baselineSet = await adminDataSet('write-baseline', baseline);
          await seedUsers(baselineSet.dir, USERS, userIds, baseline);
          return startHarness(baselineSet.dir, baseline);
        })()
      : null;
    const bare = KEYED_ONLY ? null : await startBare(userIds);
    const ceilingStore = SqliteEventStore.open(join(dataSet.dir, 'ceiling'));
    const baselineTarget = baseline ? `${PATCHES} on the ${baseline.name} build` : '';
    try {
      const token = await bearerToken(harness.url);
      const baselineToken = baselineHarness ? await bearerToken(baselineHarness.url) : '';
      const revisions = new Array<number>(USERS).fill(-1);
      if (bare) await sequentialAppends(ceilingStore, WARMUP_SECONDS, revisions);
      const appends: { perSecond: number; cpuMs: number }[] = [];
      const fsyncs: number[] = [];
      const lags: number[][] = [];
      const harnessPatches = patches(token, userIds);
      // The lag observer on at full load, as in the PATCH rounds, and off at the offered rate.
      // `writing`: the name of a load each of whose answers writes an event; fewer events than answers
      // means it measured replays, and the bench stops.
      const observe =
        (record: boolean, ask = statsOf(harness), writing?: string): NonNullable<LoadTarget['observe']> =>
        async (phase) => {
          const full = phase === 'full';
          const before = await ask(full ? 'observe' : 'quiet');
          return async (result) => {
            if (!full && writing === undefined) return;
            const after = await ask('stats');
            if (writing !== undefined && after.events - before.events < result.requests) {
              throw new Error(
                `${writing}: ${result.requests} answers wrote ${after.events - before.events} events`,
              );
            }
            if (!full || !record) return;
            // Fsyncs and lag under the full load (the stats taken before reset the lags).
            fsyncs.push((after.commits - before.commits) / result.requests);
            if (after.lags.length > 0) lags.push(after.lags);
          };
        };
      const comparison = await compareLoads(
        [
          ...(bare
            ? [
                {
                  name: BARE,
                  url: bare.url,
                  pid: bare.pid,
                  connections: CONNECTIONS,
                  requests: patches(token, userIds).plain,
                },
              ]
            : []),
          // The baseline's PATCHes just before ours in every round, observed alike (A, B, A, B...).
          ...(baselineHarness
            ? [
                {
                  name: baselineTarget,
                  url: baselineHarness.url,
                  pid: baselineHarness.pid,
                  connections: CONNECTIONS,
                  requests: patches(baselineToken, userIds).plain,
                  observe: observe(false, statsOf(baselineHarness)),
                },
              ]
            : []),
          {
            name: PATCHES,
            url: harness.url,
            pid: harness.pid,
            connections: CONNECTIONS,
            requests: harnessPatches.plain,
            observe: observe(true),
          },
          {
            name: KEYED,
            url: harness.url,
            pid: harness.pid,
            connections: CONNECTIONS,
            requests: harnessPatches.keyed,
            uniqueIds: true,
            // Keys that repeated would be replays, which write nothing: the load would measure those.
            observe: observe(false, statsOf(harness), KEYED),
          },
        ],
        {
          seconds: ROUND_SECONDS,
          warmupSeconds: WARMUP_SECONDS,
          paced: true,
          eachRound: async () => {
            if (bare) appends.push(await sequentialAppends(ceilingStore, ROUND_SECONDS, revisions));
          },
        },
      );
      return {
        comparison,
        baseline: baseline ? { build: baseline, target: baselineTarget } : null,
        appends: bare
          ? {
              perSecond: spread(appends.map((round) => round.perSecond)),
              cpuMs: spread(appends.map((round) => round.cpuMs)),
            }
          : null,
        fsyncsPerRequest: spread(fsyncs),
        lagP50: spread(lags.map((round) => percentile(round, 0.5))),
        lagP99: spread(lags.map((round) => percentile(round, 0.99))),
        lagMax: spread(lags.map((round) => percentile(round, 1))),
        lagSamples: lags.reduce((sum, round) => sum + round.length, 0),
      };
    } finally {
      await ceilingStore.close();
      await Promise.all([harness.stop(), baselineHarness?.stop(), bare?.stop()]);
    }
  })();
  return writeRun;
}

export const write: Benchmark = {
  name: 'write',
  title: `PATCH /users/{id} on ${USERS.toLocaleString('en')} users, ${CONNECTIONS} connections, embedded store (WAL, synchronous=FULL)`,
  async run() {
    const run = await measure();
    const patchFigures = run.comparison.targets.get(PATCHES);
    const bareFigures = run.comparison.targets.get(BARE);
    const keyedFigures = run.comparison.targets.get(KEYED);
    const appends = run.appends;
    if (!patchFigures || !keyedFigures || (!KEYED_ONLY && (!bareFigures || !appends))) {
      throw new Error(`No figures for ${PATCHES}, ${BARE} or ${KEYED}`);
    }
    const keyCostUs = 1000 * (keyedFigures.cpuMsPerRequest.median - patchFigures.cpuMsPerRequest.median);
    const keyed = loadFigures({
      label: 'PATCH with Idempotency-Key',
      subject: keyedFigures,
      ceiling: { name: `${PATCHES} without Idempotency-Key`, figures: patchFigures },
      target: { kind: '>=', bound: 0.9 },
      throughputTarget: { kind: '>=', bound: 0.9 },
    });
    // Issue 35: PATCH with personal values encrypted against the build before, in the same rounds.
    const baselineFigures = run.baseline ? run.comparison.targets.get(run.baseline.target) : undefined;
    const againstBaseline =
      run.baseline && baselineFigures
        ? loadFigures({
            label: `PATCH, current against the ${run.baseline.build.name} build`,
            subject: patchFigures,
            ceiling: { name: run.baseline.target, figures: baselineFigures },
            target: { kind: '>=', bound: 0.9 },
            throughputTarget: { kind: '>=', bound: 0.9 },
          })
        : [];
    return {
      name: this.name,
      title: this.title,
      ...(run.baseline ? { baseline: run.baseline.build.commit } : {}),
      figures:
        !bareFigures || !appends
          ? [...againstBaseline, ...keyed]
          : [
              ...againstBaseline,
              ...loadFigures({
                label: 'PATCH',
                subject: patchFigures,
                ceiling: { name: BARE, figures: bareFigures },
                target: { kind: '>=', bound: 0.7 },
              }),
              ...keyed,
              figure({
                name: 'PATCH requests/s at full load, against sequential appends',
                unit: 'req/s',
                value: patchFigures.rps,
                ceiling: { name: APPENDS, value: appends.perSecond },
                ratio: patchFigures.rps.median / appends.perSecond.median,
                target: { kind: '>=', bound: 1 },
                clientBound: patchFigures.clientBoundRounds > 0,
              }),
              figure({
                name: 'CPU per sequential append (ceiling, this process)',
                unit: 'ms',
                value: appends.cpuMs,
              }),
              figure({ name: 'fsyncs (commits) per PATCH', unit: '', value: run.fsyncsPerRequest }),
              figure({ name: 'fsyncs per sequential append (ceiling)', unit: '', value: single(1) }),
            ],
      notes: [
        ...(run.baseline
          ? [
              `Against the ${run.baseline.build.name} build (BENCH_BASELINE, built in ${run.baseline.build.root}): the ` +
                'same harness on its own store, seeded with the same users by its own store code, loaded in every ' +
                'round just before ours with the same requests; the CPU ratio is its CPU per request over ours, the ' +
                'throughput ratio ours over its.',
            ]
          : []),
        ...(!bareFigures
          ? [
              'BENCH_WRITE=keyed: only the PATCHes with and without a key ran (a trial: do not commit its figures).',
            ]
          : [
              `The first ceiling (${BARE}, bench/ceilings/bare-write-server.ts, its own process and store) appends ` +
                'the same UserPatched event with the same metadata through the same store code (group commit, WAL, ' +
                'synchronous=FULL) and answers the user with its ETag; the ratio is its CPU per request over ours.',
              'Sequential appends, bare route, PATCH and keyed PATCH rounds alternate; the servers are idle while the ' +
                'appends run.',
            ]),
        `${KEYED}: the same server, users and ages as the PATCHes without a key, every request with a key used ` +
          'nowhere else in the run (the generator puts an id of its own in each request as it sends it: pre-built ' +
          'lists of keys cost it more CPU than the server, in their building and their garbage). A key costs ' +
          `${Math.round(keyCostUs)} µs of server CPU per PATCH (medians, keyed minus unkeyed): its SHA-256, the ` +
          'claim before the handler (one upsert in DATA_DIR/idempotency.db), the answer sealed (AES-GCM) and ' +
          "kept after it (one keyed update), the writes of concurrent requests sharing a commit, and a trim of the account's keys every 64 " +
          'claims.',
        'The server runs in the bench harness (bench/harness/api-harness.ts): the built app plus a commit counter ' +
          'and the lag observer, which is off in the paced rounds that give the CPU per request.',
        ...loadNotes(run.comparison, BARE),
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
