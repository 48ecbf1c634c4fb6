import { rmSync } from 'node:fs';
import { AddressInfo, createServer, Server, Socket } from 'node:net';
import { newDataDir } from '../e2e/support/test-app';
import { freePort } from '../support/free-port';
import { startApi, stopRunning } from './support/api-process';

/**
 * EventStoreDB unreachable when the API starts (issue 21 problem 3): nothing listening at its
 * address, or a server that accepts connections and never answers. The API listens anyway, says
 * in its log within seconds that the event store does not answer, and answers 503, readiness too.
 */

/** Within this the log names the problem and requests get their 503. */
const PROMPTLY_MS = 12_000;

/** A TCP server that accepts every connection and never sends a byte: a hung EventStoreDB. */
async function startSilentServer(): Promise<{ port: number; stop(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => socket.destroy());
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('EventStoreDB unreachable at start', () => {
  let dataDir: string;
  let silent: Awaited<ReturnType<typeof startSilentServer>>;

  beforeAll(async () => {
    silent = await startSilentServer();
  });
  afterAll(() => silent.stop());

  beforeEach(() => {
    dataDir = newDataDir();
  });
  afterEach(async () => {
    await stopRunning();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it.each([
    ['nothing listens at its address', async () => freePort()],
    ['it accepts connections and never answers', async () => silent.port],
  ])(
    '%s: the API listens, logs it within seconds, and answers 503',
    async (_case, port) => {
      const started = Date.now();
      const api = await startApi(dataDir, { EVENTSTORE_URL: `esdb://127.0.0.1:${await port()}?tls=false` });

      // Said in the log by the API itself, before any request asked (liveness checks nothing).
      await api.process.waitForOutput(/EventStoreDB did not answer|ECONNREFUSED/, PROMPTLY_MS);
      expect(Date.now() - started).toBeLessThan(PROMPTLY_MS + 5_000);

      const timed = async (request: () => Promise<Response>) => {
        const begun = Date.now();
        const response = await request();
        return { response, ms: Date.now() - begun };
      };
      const ready = await timed(() => fetch(`${api.url}/health/ready`));
      expect(ready.response.status).toBe(503);
      expect(ready.ms).toBeLessThan(PROMPTLY_MS);
      expect(JSON.stringify(await ready.response.json())).toMatch(/"eventStore":\{[^}]*"status":"down"/);

      // A request that needs the event store: 503 problem details with Retry-After, not a hang.
      const reset = await timed(() =>
        fetch(`${api.url}/api/v1/account/password`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'someone@example.com' }),
        }),
      );
      expect(reset.response.status).toBe(503);
      expect(reset.response.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(reset.ms).toBeLessThan(PROMPTLY_MS);
      expect(api.process.exit()).toBeNull();
    },
    60_000,
  );
});
