import { rmSync } from 'node:fs';
import { EsdbDouble, startEsdbDouble } from '../doubles/esdb/esdb-double';
import { MongoDouble, startMongoDouble } from '../doubles/mongo/mongo-double';
import { runCliWithInput } from '../e2e/support/cli-process';
import { newDataDir } from '../e2e/support/test-app';
import { startTcpProxy, TcpProxy } from '../support/tcp-proxy';
import { running, startApi } from './support/api-process';

/**
 * Store outages on the production shape (issue 21 problem 4): EventStoreDB frozen behind a proxy,
 * MongoDB killed. Each is a 503 with Retry-After within seconds, never a 500 or a hang.
 */

const PASSWORD = 'outage-test-passphrase';
/** What "within seconds" means here: the adapters' deadlines (8 s for EventStoreDB, 5 s for MongoDB) and some. */
const BOUND_MS = 12_000;

describe('store outages', () => {
  let dataDir: string;
  let esdb: EsdbDouble;
  let mongo: MongoDouble;
  let proxy: TcpProxy;
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = newDataDir();
    [esdb, mongo] = await Promise.all([startEsdbDouble(), startMongoDouble()]);
    proxy = await startTcpProxy(esdb.port);
    const uri = new URL(mongo.uri);
    uri.pathname = '/outages';
    env = {
      EVENTSTORE_URL: `esdb://127.0.0.1:${proxy.port}?tls=false`,
      MONGODB_URI: uri.toString(),
      DATA_KEY_SECRET: 'the data key secret of the outage tests, 32+ chars',
    };
  });

  afterAll(async () => {
    await Promise.all([...running].map((child) => child.stop().catch(() => undefined)));
    running.clear();
    await proxy.stop();
    // The test stopped MongoDB already; stopping it again is refused.
    await Promise.all([esdb.stop(), mongo.stop().catch(() => undefined)]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function timed(request: () => Promise<Response>): Promise<{ response: Response; ms: number }> {
    const started = Date.now();
    const response = await request();
    return { response, ms: Date.now() - started };
  }

  it('answers 503 with Retry-After within seconds while EventStoreDB is frozen or MongoDB is down, and recovers', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      const created = await runCliWithInput(
        dataDir,
        PASSWORD,
        ...[
          'accounts',
          'create',
          '--email',
          'ops@example.com',
          '--password-stdin',
          '--name',
          'O',
          '--age',
          '40',
        ],
      );
      expect(created.code).toBe(0);
    } finally {
      process.env = saved;
    }
    const api = await startApi(dataDir, env);
    const reset = () =>
      fetch(`${api.url}/api/v1/account/password`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'someone@example.com' }),
      });
    const customers = () =>
      fetch(`${api.url}/customers`, {
        headers: { authorization: `Basic ${Buffer.from(`ops@example.com:${PASSWORD}`).toString('base64')}` },
      });
    expect((await reset()).status).toBe(202);
    expect((await customers()).status).toBe(200);

    proxy.freeze();
    const frozen = await timed(reset);
    expect(frozen.response.status).toBe(503);
    expect(frozen.response.headers.get('retry-after')).toBe('5');
    expect(await frozen.response.json()).toMatchObject({ type: 'service-unavailable' });
    expect(frozen.ms).toBeLessThan(BOUND_MS);
    proxy.thaw();
    let status = 0;
    for (const deadline = Date.now() + 20_000; status !== 202 && Date.now() < deadline;) {
      status = (await reset()).status;
    }
    expect(status).toBe(202);

    await mongo.stop();
    const down = await timed(customers);
    expect(down.response.status).toBe(503);
    expect(down.response.headers.get('retry-after')).toBe('5');
    expect(down.ms).toBeLessThan(BOUND_MS);
    const ready = await fetch(`${api.url}/health/ready`);
    expect(ready.status).toBe(503);
  });
});
