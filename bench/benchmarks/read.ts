import { join } from 'node:path';
import type autocannon from 'autocannon';
import { basicAuthorization, bearerToken, customersDataSet } from '../support/datasets';
import { compareLoads, type LoadFigures } from '../support/load';
import { chronicleEnv, ROOT, startServer, startTsProcess } from '../support/processes';
import { figure } from '../support/report';
import type { Benchmark } from './benchmark';

const CUSTOMERS = 100_000;
const CONNECTIONS = 64;
const PAGE_SIZE = 100;

/** Every page of the data set in turn, so that no single page is all that is measured. */
function pages(headers: Record<string, string>): autocannon.Request[] {
  let next = 0;
  const pageCount = CUSTOMERS / PAGE_SIZE;
  return [
    {
      method: 'GET',
      headers,
      setupRequest: (request) => ({
        ...request,
        path: `/customers?maxpagesize=${PAGE_SIZE}&page=${(next++ % pageCount) + 1}`,
      }),
    },
  ];
}

interface ReadRun {
  ceiling: LoadFigures;
  bearer: LoadFigures;
  basic: LoadFigures;
}

let readRun: Promise<ReadRun> | null = null;

/** One run serves both benchmarks: the ceiling, Bearer and Basic loads taken in turn. */
function measure(): Promise<ReadRun> {
  readRun ??= (async () => {
    const dataSet = await customersDataSet(CUSTOMERS);
    const server = await startServer(dataSet.dir);
    const bare = await startTsProcess(
      join(ROOT, 'bench/ceilings/bare-read-server.ts'),
      chronicleEnv(dataSet.dir),
      '/customers?maxpagesize=1',
    );
    try {
      const token = await bearerToken(server.url);
      const loads = await compareLoads([
        { name: 'ceiling', options: { url: bare.url, connections: CONNECTIONS, requests: pages({}) } },
        {
          name: 'bearer',
          options: {
            url: server.url,
            connections: CONNECTIONS,
            requests: pages({ authorization: `Bearer ${token}` }),
          },
        },
        {
          name: 'basic',
          options: {
            url: server.url,
            connections: CONNECTIONS,
            requests: pages({ authorization: basicAuthorization() }),
          },
        },
      ]);
      const get = (name: string): LoadFigures => {
        const figures = loads.get(name);
        if (!figures) throw new Error(`No figures for ${name}`);
        return figures;
      };
      return { ceiling: get('ceiling'), bearer: get('bearer'), basic: get('basic') };
    } finally {
      await Promise.all([server.stop(), bare.stop()]);
    }
  })();
  return readRun;
}

const CEILING = 'bare Fastify, same pages, response schema';

export const read: Benchmark = {
  name: 'read',
  title: `GET /customers?maxpagesize=${PAGE_SIZE} with Bearer, ${CUSTOMERS.toLocaleString('en')} customers, ${CONNECTIONS} connections`,
  async run() {
    const { ceiling, bearer } = await measure();
    return {
      name: this.name,
      title: this.title,
      figures: [
        figure({
          name: 'requests/s (Bearer)',
          unit: 'req/s',
          value: bearer.rps,
          ceiling: { name: CEILING, value: ceiling.rps },
          ratio: bearer.rps.median / ceiling.rps.median,
          target: { kind: '>=', bound: 0.85 },
        }),
        figure({
          name: 'p50 latency (Bearer)',
          unit: 'ms',
          value: bearer.p50,
          ceiling: { name: CEILING, value: ceiling.p50 },
        }),
        figure({
          name: 'p99 latency (Bearer)',
          unit: 'ms',
          value: bearer.p99,
          ceiling: { name: CEILING, value: ceiling.p99 },
        }),
      ],
      notes: [`Pages 1 to ${CUSTOMERS / PAGE_SIZE} requested in turn by both servers.`],
    };
  },
};

export const readBasic: Benchmark = {
  name: 'read-basic',
  title: `the same with Basic credentials, against the Bearer figure of the same run`,
  async run() {
    const { bearer, basic } = await measure();
    return {
      name: this.name,
      title: this.title,
      figures: [
        figure({
          name: 'requests/s (Basic)',
          unit: 'req/s',
          value: basic.rps,
          ceiling: { name: 'Bearer', value: bearer.rps },
          ratio: basic.rps.median / bearer.rps.median,
          target: { kind: '>=', bound: 0.9 },
        }),
        figure({
          name: 'p50 latency (Basic)',
          unit: 'ms',
          value: basic.p50,
          ceiling: { name: 'Bearer', value: bearer.p50 },
        }),
        figure({
          name: 'p99 latency (Basic)',
          unit: 'ms',
          value: basic.p99,
          ceiling: { name: 'Bearer', value: bearer.p99 },
        }),
      ],
      notes: [],
    };
  },
};
