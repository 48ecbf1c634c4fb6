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
/**
 * The server counts as quiet once it used at most one clock tick (10 ms) of CPU over this long:
 * at rest it uses about 5 ms a second.
 */
const QUIET_WINDOW_MS = 500;
/** A server not quiet after this long is busy with something the bench cannot wait out. */
const QUIET_LIMIT_MS = 120_000;

/** Resolves once the server has gone quiet: what the last request set off in the background is done. */
async function quiet(pid: number): Promise<void> {
  const deadline = performance.now() + QUIET_LIMIT_MS;
  while (performance.now() < deadline) {
    const before = processCpuSeconds(pid);
    await sleep(QUIET_WINDOW_MS);
    if (processCpuSeconds(pid) - before <= 0.01) return;
  }
  throw new Error(`The server (pid ${pid}) was still busy ${QUIET_LIMIT_MS / 1000} s after an erasure`);
}

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
  /** DELETEs answered 500 (then asked again): a defect the figures must not hide. */
  failures: string[];
}

/** How often a DELETE answered 500 is asked again before the benchmark gives up. */
const ATTEMPTS = 3;

/**
 * DELETE /users/{id} until it answers 204, with the milliseconds of the first attempt, or null when
 * that one answered 500: the erasure handler and the erasure saga both complete each erasure, and
 * their two forgets of the person's kept e-mails race (OutboxMailer.forget reads a file the other
 * just removed: ENOENT, a 500). Erasing again is harmless, so the erasure is asked again and the
 * failure counted and reported, and the failed attempt's time is left out.
 */
async function erase(store: Store, userId: string): Promise<number | null> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const started = performance.now();
    const response = await fetch(`${store.server.url}/users/${userId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${store.token}` },
    });
    const body = await response.text();
    const ms = performance.now() - started;
    if (response.status === 204) return attempt === 1 ? ms : null;
    if (response.status !== 500 || attempt === ATTEMPTS) {
      throw new Error(`DELETE /users/${userId}: ${response.status} ${body}`);
    }
    store.failures.push(`DELETE /users/${userId} answered 500: ${body}`);
    await quiet(store.server.pid);
  }
  throw new Error('unreachable');
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
/**
 * One round on one store: SUBJECTS people made, then erased one at a time, each on a quiet server
 * and followed until it is quiet again, so that each erasure's CPU holds all it set off in the
 * background (the projection, the erasure saga, the read models' snapshot) and nothing else.
 */
async function round(store: Store): Promise<void> {
  const { pid } = store.server;
  const people: string[] = [];
  for (let index = 0; index < SUBJECTS + 1; index++) people.push(await person(store));
  const viaCli = people.pop()!;
  const times: number[] = [];
  let cpuSeconds = 0;
  for (const userId of people) {
    await quiet(pid);
    const cpuBefore = processCpuSeconds(pid);
    const ms = await erase(store, userId);
    if (ms !== null) times.push(ms);
    await quiet(pid);
    cpuSeconds += processCpuSeconds(pid) - cpuBefore;
  }
  // CPU time comes in ticks of 10 ms: the round's total over its erasures.
  store.cpuMs.push((1000 * cpuSeconds) / people.length);
  if (times.length > 0) store.apiMs.push(spread(times).median);
  await quiet(pid);
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
          failures: [],
        });
      }
      // A warm-up erasure on each, on a quiet server as in the rounds: the first loads what every
      // later one finds ready.
      for (const store of stores) {
        const userId = await person(store);
        await quiet(store.server.pid);
        await erase(store, userId);
        await quiet(store.server.pid);
      }
      for (let index = 0; index < ROUNDS; index++) for (const store of stores) await round(store);
    } finally {
      await Promise.all(stores.map((store) => store.server.stop()));
    }
    const smallest = stores[0];
    const largest = stores[stores.length - 1];
    const figures: Figure[] = [];
    const rows: [string, string, (store: Store) => number[], boolean][] = [
      ['DELETE /users/{id}, time to its answer', 'ms', (store) => store.apiMs, true],
      ['server CPU per erasure, with all it set off', 'ms', (store) => store.cpuMs, true],
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
        ...stores.flatMap((store) =>
          store.failures.length === 0
            ? []
            : [
                `**${store.failures.length} DELETE${store.failures.length === 1 ? '' : 's'} answered 500 on the ` +
                  `${label(store.size)} store** (asked again, which answered 204; the failed attempts' times left ` +
                  `out): the erasure handler and the erasure saga race in OutboxMailer.forget. The first: ` +
                  `${store.failures[0].slice(0, 400)}`,
              ],
        ),
        `Each store: users registered one event each by direct appends (as \`scale\` seeds), and the admin's ` +
          'account; a server of the current build on each, both running throughout.',
        `${ROUNDS} rounds, the stores in turn (A, B, A, B...). Each round makes ${SUBJECTS + 1} people on each ` +
          'through the API (POST /api/v1/accounts, then two PATCHes: their values encrypted under their own key), ' +
          `then erases ${SUBJECTS} of them one after another with DELETE /users/{id} and the last with ` +
          '`chronicle erase --user` against the running server.',
        'Each erasure starts on a quiet server (at most one 10 ms tick of CPU in 500 ms) and is followed until ' +
          "the server is quiet again. DELETE: the median of the round's, one connection, from the request to its " +
          'answer. Server CPU: /proc from the request to quiet again, so it holds what the erasure set off in the ' +
          "background (the projection, the erasure saga, the read models' snapshot written after a deletion) " +
          "and the idle CPU of that wait (about 5 ms a second); the round's total over its erasures.",
        `The ratio on the last row of each figure is the ${label(largest.size)} store over the ${label(smallest.size)} ` +
          'one (medians of the rounds); target < 1.5: erasure costs the same whatever the length of the history. ' +
          "The CLI's figure is mostly its start-up and is reported, not judged.",
      ],
    };
  },
};
