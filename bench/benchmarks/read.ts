import { join } from 'node:path';
import type autocannon from 'autocannon';
import { basicAuthorization, bearerToken, customersDataSet } from '../support/datasets';
import { compareLoads, type LoadComparison, type LoadFigures, loadFigures, loadNotes } from '../support/load';
import { chronicleEnv, ROOT, startServer, startTsProcess } from '../support/processes';
import type { Benchmark } from './benchmark';

const CUSTOMERS = 100_000;
const CONNECTIONS = 64;
const PAGE_SIZE = 100;

/** Every page of the data set in turn, built once, so that no single page is all that is measured. */
function pages(headers: Record<string, string>): autocannon.Request[][] {
  const pageCount = CUSTOMERS / PAGE_SIZE;
  return [
    Array.from({ length: pageCount }, (_, index) => ({
      method: 'GET',
      headers,
      path: `/customers?maxpagesize=${PAGE_SIZE}&page=${index + 1}`,
    })),
  ];
}

let readRun: Promise<LoadComparison> | null = null;

/** One run serves both benchmarks: the ceiling, Bearer and Basic loads taken in turn. */
function measure(): Promise<LoadComparison> {
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
      const target = (name: string, url: string, pid: number, headers: Record<string, string>) => {
        const built = pages(headers);
        return { name, url, pid, connections: CONNECTIONS, requests: () => built };
      };
      return await compareLoads([
        target(CEILING, bare.url, bare.pid, {}),
        target('Bearer', server.url, server.pid, { authorization: `Bearer ${token}` }),
        target('Basic', server.url, server.pid, { authorization: basicAuthorization() }),
      ]);
    } finally {
      await Promise.all([server.stop(), bare.stop()]);
    }
  })();
  return readRun;
}

function figures(comparison: LoadComparison, name: string): LoadFigures {
  const found = comparison.targets.get(name);
  if (!found) throw new Error(`No figures for ${name}`);
  return found;
}

const CEILING = 'bare Fastify, same pages, response schema';

export const read: Benchmark = {
  name: 'read',
  title: `GET /customers?maxpagesize=${PAGE_SIZE} with Bearer, ${CUSTOMERS.toLocaleString('en')} customers, ${CONNECTIONS} connections`,
  async run() {
    const run = await measure();
    return {
      name: this.name,
      title: this.title,
      figures: loadFigures({
        label: 'Bearer',
        subject: figures(run, 'Bearer'),
        ceiling: { name: CEILING, figures: figures(run, CEILING) },
        target: { kind: '>=', bound: 0.85 },
      }),
      notes: [
        `Pages 1 to ${CUSTOMERS / PAGE_SIZE} requested in turn by both servers; the ratio is the ceiling's CPU per request over ours.`,
        ...loadNotes(run, CEILING),
      ],
    };
  },
};

export const readBasic: Benchmark = {
  name: 'read-basic',
  title: `the same with Basic credentials, against the Bearer figure of the same run`,
  async run() {
    const run = await measure();
    return {
      name: this.name,
      title: this.title,
      figures: loadFigures({
        label: 'Basic',
        subject: figures(run, 'Basic'),
        ceiling: { name: 'Bearer', figures: figures(run, 'Bearer') },
        target: { kind: '>=', bound: 0.9 },
      }),
      notes: ["The ratio is Bearer's CPU per request over Basic's, in the run of the read benchmark."],
    };
  },
};
