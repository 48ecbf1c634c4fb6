import { bearerToken, customersDataSet, type DataSet, usersDataSet } from '../support/datasets';
import { compareLoads, type LoadFigures } from '../support/load';
import { startServer } from '../support/processes';
import { type Figure, figure } from '../support/report';
import { type Spread } from '../support/stats';
import type { Benchmark } from './benchmark';

const SIZES = [10_000, 100_000, 1_000_000];
/** Ten per page, so that page 500 exists in the smallest data set too. */
const PAGE_SIZE = 10;

interface List {
  /** What the list holds, as the figures name it. */
  things: string;
  dataSet(size: number): Promise<DataSet>;
  /** The queries whose cost must not grow with the data set or the page number. */
  queries(size: number): { name: string; path: string }[];
}

const LISTS: List[] = [
  {
    things: 'customers',
    dataSet: customersDataSet,
    queries: (customers) => [
      { name: 'page 1', path: `/customers?maxpagesize=${PAGE_SIZE}` },
      { name: 'page 500', path: `/customers?maxpagesize=${PAGE_SIZE}&page=500` },
      { name: 'gt window near the end', path: `/customers?maxpagesize=${PAGE_SIZE}&gt=${customers - 50}` },
      { name: 'X-Total-Count of a range of all', path: `/customers?maxpagesize=1&gt=0&lt=${customers + 1}` },
    ],
  },
  {
    things: 'users',
    dataSet: usersDataSet,
    queries: (users) => [
      { name: 'page 1', path: `/users?maxpagesize=${PAGE_SIZE}` },
      { name: 'page 500', path: `/users?maxpagesize=${PAGE_SIZE}&page=500` },
      { name: 'last page', path: `/users?maxpagesize=${PAGE_SIZE}&page=${Math.floor(users / PAGE_SIZE)}` },
    ],
  },
];

export const scale: Benchmark = {
  name: 'scale',
  title: `GET /customers and GET /users latency at ${SIZES.map((size) => size.toLocaleString('en')).join(', ')} of each (1 connection, Bearer)`,
  async run() {
    const figures: Figure[] = [];
    const medians: number[] = [];
    for (const list of LISTS) {
      const bySize = new Map<number, Map<string, LoadFigures>>();
      for (const size of SIZES) {
        const dataSet = await list.dataSet(size);
        const server = await startServer(dataSet.dir);
        try {
          const token = await bearerToken(server.url);
          // Short rounds: one connection's latency settles within a second or two.
          const loads = await compareLoads(
            list.queries(size).map((query) => ({
              name: query.name,
              url: server.url,
              pid: server.pid,
              connections: 1,
              requests: () => [
                [{ method: 'GET', path: query.path, headers: { authorization: `Bearer ${token}` } }],
              ],
            })),
            { seconds: 2, warmupSeconds: 1, paced: false },
          );
          bySize.set(size, loads.targets);
        } finally {
          await server.stop();
        }
      }
      const cell = (size: number, query: string): Spread => {
        const figures = bySize.get(size)?.get(query);
        if (!figures) throw new Error(`No figures for ${list.things} ${query} at ${size}`);
        return figures.meanMs;
      };
      for (const { name } of list.queries(SIZES[0])) {
        const cells = SIZES.map((size) => cell(size, name));
        medians.push(...cells.map((value) => value.median));
        const fastest = Math.min(...cells.map((value) => value.median));
        const slowest = Math.max(...cells.map((value) => value.median));
        SIZES.forEach((size, index) => {
          const isLast = index === SIZES.length - 1;
          figures.push(
            figure({
              name: `/${list.things} ${name}, ${size.toLocaleString('en')} ${list.things}`,
              unit: 'ms',
              value: cells[index],
              ...(isLast ? { ratio: slowest / fastest, target: { kind: '<' as const, bound: 2 } } : {}),
            }),
          );
        });
      }
    }
    figures.push(
      figure({
        name: 'slowest over fastest of every query and size',
        unit: 'ms',
        value: { median: Math.max(...medians), min: Math.min(...medians), max: Math.max(...medians) },
        ratio: Math.max(...medians) / Math.min(...medians),
        target: { kind: '<', bound: 2 },
      }),
    );
    return {
      name: this.name,
      title: this.title,
      figures,
      notes: [
        'Mean latency over each round (1 connection: 1000 / requests per second, exact below 1 ms where ' +
          "autocannon's histogram rounds to whole ms), loopback and HTTP included.",
        'The ratio on the last row of each query is its slowest size over its fastest; the last figure compares every cell.',
        '/users: users registered a millisecond apart, with no accounts (appended directly); the admin reads them.',
      ],
    };
  },
};
