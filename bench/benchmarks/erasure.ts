import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { processCpuSeconds } from '../support/cpu';
import { bearerToken, usersDataSet, writableCopy } from '../support/datasets';
import { positiveEnv, ROUNDS } from '../support/load';
import { runCli, type RunningProcess, startServer } from '../support/processes';
import { type Figure, figure, ratioFigure } from '../support/report';
import { spread, type Spread } from '../support/stats';
import type { Benchmark } from './benchmark';

/**
 * The stores' sizes in events, smallest first; BENCH_ERASURE_EVENTS=2000,20000 for a trial. The
 * ratio judged is the largest over the smallest.
 */
const SIZES = sizes(process.env.BENCH_ERASURE_EVENTS ?? '10000,1000000');
/** Subjects erased on each store in each round (BENCH_ERASURE_SUBJECTS): CPU time is read in ticks of 10 ms. */
const SUBJECTS = positiveEnv('BENCH_ERASURE_SUBJECTS', 10);
/** After a round's last DELETE: what it set off (the projection, the erasure saga) is counted too. */
const SETTLE_MS = 500;

function sizes(text: string): number[] {
  const values = text.split(',').map((part) => Number(part.trim()));
  if (values.some((value) => !Number.isInteger(value) || value < 1)) {
    throw new Error('BENCH_ERASURE_EVENTS must be positive integers, separated by commas');
  }
  if (values.length < 2) throw new Error('BENCH_ERASURE_EVENTS must name at least two sizes');
  return [...values].sort((a, b) => a - b);
}

const label = (size: number): string => `${size.toLocaleString('en')} events`;

interface Store {
  size: number;
  dir: string;
  server: RunningProcess;
  token: string;
  /** Milliseconds per DELETE, one value per round (the round's median). */
  apiMs: number[];
  /** Server CPU milliseconds per erasure, one value per round. */
  cpuMs: number[];
  /** Milliseconds of one `chronicle erase` each round, start-up included. */
  cliMs: number[];
}

async function call(store: Store, method: string, path: string, body?: unknown): Promise<Response> {
  const response = await fetch(`${store.server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${store.token}`,
      ...(body === undefined
        ? {}
        : { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response;
}

/**
 * A person as the API makes one: an account with its user (their values encrypted under their new
 * key), then two PATCHes, so that the erasure meets a stream of a few events.
 */
async function person(store: Store): Promise<string> {
  const tag = randomUUID();
  const created = await call(store, 'POST', '/api/v1/accounts', {
    email: `erase-${tag}@example.com`,
    name: `Erase Me ${tag}`,
    age: 30,
  });
  const { userId } = (await created.json()) as { userId: string };
  for (const age of [31, 32]) await (await call(store, 'PATCH', `/users/${userId}`, { age })).arrayBuffer();
  return userId;
}

/** One round on one store: SUBJECTS people made, then erased one after another, timed. */
async function round(store: Store): Promise<void> {
  const people: string[] = [];
  for (let index = 0; index < SUBJECTS + 1; index++) people.push(await person(store));
  const viaCli = people.pop()!;
  // What making them set off (projections, the invitation) is done before the CPU is read.
  await sleep(SETTLE_MS);
  const cpuBefore = processCpuSeconds(store.server.pid);
  const times: number[] = [];
  for (const userId of people) {
    const started = performance.now();
    const response = await call(store, 'DELETE', `/users/${userId}`);
    await response.arrayBuffer();
    times.push(performance.now() - started);
    if (response.status !== 204) throw new Error(`DELETE /users/${userId}: ${response.status}`);
  }
  await sleep(SETTLE_MS);
  store.cpuMs.push((1000 * (processCpuSeconds(store.server.pid) - cpuBefore)) / people.length);
  store.apiMs.push(spread(times).median);
  const started = performance.now();
  await runCli(store.dir, ['erase', '--user', viaCli]);
  store.cliMs.push(performance.now() - started);
}

export const erasure: Benchmark = {
  name: 'erasure',
  title: `erasing one person (DELETE /users/{id}, and \`chronicle erase\`) in stores of ${SIZES.map(label).join(' and ')}`,
  async run() {
    const stores: Store[] = [];
    try {
      for (const size of SIZES) {
        // The users `scale` reads, appended directly. Erasures write: a kept data set is copied.
        const dir = writableCopy(await usersDataSet(size), `erasure-${size}`);
        const server = await startServer(dir);
        stores.push({
          size,
          dir,
          server,
          token: await bearerToken(server.url),
          apiMs: [],
          cpuMs: [],
          cliMs: [],
        });
      }
      // A warm-up erasure on each: the first loads what every later one finds ready.
      for (const store of stores) await call(store, 'DELETE', `/users/${await person(store)}`);
      for (let index = 0; index < ROUNDS; index++) for (const store of stores) await round(store);
    } finally {
      await Promise.all(stores.map((store) => store.server.stop()));
    }
    const smallest = stores[0];
    const largest = stores[stores.length - 1];
    const figures: Figure[] = [];
    const rows: [string, string, (store: Store) => number[], boolean][] = [
      ['DELETE /users/{id}, time to its answer', 'ms', (store) => store.apiMs, true],
      ['server CPU per erasure (DELETE and what it set off)', 'ms', (store) => store.cpuMs, true],
      ['`chronicle erase`, its own process, start-up included', 'ms', (store) => store.cliMs, false],
    ];
    for (const [name, unit, values, judged] of rows) {
      const of = (store: Store): Spread => spread(values(store));
      for (const store of stores.slice(0, -1)) {
        figures.push(figure({ name: `${name}, ${label(store.size)}`, unit, value: of(store) }));
      }
      figures.push(
        ratioFigure({
          name: `${name}, ${label(largest.size)}`,
          unit,
          value: of(largest),
          ceiling: { name: `the same at ${label(smallest.size)}`, value: of(smallest) },
          ...(judged ? { target: { kind: '<' as const, bound: 1.5 } } : {}),
        }),
      );
    }
    return {
      name: this.name,
      title: this.title,
      figures,
      notes: [
        `Each store: users registered one event each by direct appends (as \`scale\` seeds), and the admin's ` +
          'account; a server of the current build on each, both running throughout.',
        `${ROUNDS} rounds, the stores in turn (A, B, A, B...). Each round makes ${SUBJECTS + 1} people on each ` +
          'through the API (POST /api/v1/accounts, then two PATCHes: their values encrypted under their own key), ' +
          `then erases ${SUBJECTS} of them one after another with DELETE /users/{id} and the last with ` +
          '`chronicle erase --user` against the running server.',
        `DELETE: the median of the round's erasures, one connection; server CPU: /proc over the round's erasures ` +
          `and ${SETTLE_MS} ms after the last (the projection and the saga that follow each erasure), over the ` +
          'erasures (the server idles at about 5 ms of CPU a second).',
        `The ratio on the last row of each figure is the ${label(largest.size)} store over the ${label(smallest.size)} ` +
          'one (medians of the rounds); target < 1.5: erasure costs the same whatever the length of the history. ' +
          "The CLI's figure is mostly its start-up and is reported, not judged.",
      ],
    };
  },
};
