import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandBus } from '@nestjs/cqrs';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { OpenAccountCommand, SeedCustomersCommand, SYSTEM_ACTOR, SYSTEM_AUTH } from '@chronicle/application';
import { ChronicleConfig, parseConfig } from '@chronicle/config';
import { comparePositions, EventStore, formatPosition, Position } from '@chronicle/event-store';
import { READ_MODELS_CHECKPOINT, ReadStore } from '@chronicle/read-models';
import { createApp } from '../../../apps/api/src/create-app';
import { backendEnv, discardBackend, E2E_BACKEND, stopAtFileEnd } from './backend';
import { ResponseChecker } from './openapi-responses';
import { AppProcess, startProjector } from '../../support/app-process';

export { backendEnv, E2E_BACKEND } from './backend';

export interface TestAccount {
  accountId: string;
  userId: string;
  email: string;
  password: string;
}

export interface TestApp {
  url: string;
  app: NestFastifyApplication;
  config: ChronicleConfig;
  dataDir: string;
  /** The projector process on the doubles backend (E2E_BACKEND=doubles); null on embedded. */
  projector: AppProcess | null;
  createAccount(options?: {
    admin?: boolean;
    auditor?: boolean;
    name?: string;
    age?: number;
    password?: string;
  }): Promise<TestAccount>;
  seedCustomers(count: number): Promise<void>;
  /** Resolves when the read models have applied every event written so far. */
  settle(): Promise<void>;
  stop(): Promise<void>;
  /** Stops and deletes the data directory. */
  destroy(): Promise<void>;
}

let accounts = 0;

/** How long settle() waits for the read models; generous, as a projector process starts cold. */
const SETTLE_TIMEOUT_MS = 15_000;

export function newDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'chronicle-e2e-'));
}

/**
 * The whole HTTP app listening on a free port: on the embedded default, or with E2E_BACKEND=doubles
 * on the production shape (EventStoreDB and MongoDB doubles, projections in a projector process).
 */
export async function startTestApp(
  options: { dataDir?: string; env?: Record<string, string> } = {},
): Promise<TestApp> {
  const dataDir = options.dataDir ?? newDataDir();
  const stores = await backendEnv(dataDir);
  const config = parseConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    PORT: '0',
    // No metrics listener unless a test asks for one: apps in parallel would contend for 9464.
    METRICS_PORT: '0',
    ...stores,
    ...options.env,
  });
  const projector =
    E2E_BACKEND === 'doubles'
      ? startProjector({ DATA_DIR: dataDir, ...stores, ...options.env, METRICS_PORT: '0' })
      : null;
  let app: NestFastifyApplication | undefined;
  let checker: ResponseChecker | null = null;
  try {
    app = await createApp(config);
    ResponseChecker.install(app.getHttpAdapter().getInstance(), () => checker);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.getHttpServer().address() as AddressInfo;
    checker = new ResponseChecker(
      (await (await fetch(`http://127.0.0.1:${port}/docs/json`)).json()) as never,
    );
    // The app listens at once; tests start once it is ready (the history applied), as a balancer would.
    await untilReady(`http://127.0.0.1:${port}`);
    // A projector starts cold and catches up the whole history first: a data directory seeded
    // with thousands of customers takes it past 20 s on two busy cores.
    await projector?.waitForOutput(/Projector ready/, 60_000);
  } catch (error) {
    await app?.close();
    await projector?.stop();
    throw error;
  }
  const { port } = app.getHttpServer().address() as AddressInfo;
  const commands = app.get(CommandBus);
  const context = { actor: SYSTEM_ACTOR, correlationId: 'e2e-setup', auth: SYSTEM_AUTH };

  const settle = async () => {
    const head = await app.get(EventStore).headPosition();
    if (head) await checkpointReaches(app.get(ReadStore), head, projector);
  };
  let stopped: Promise<void> | null = null;
  const stop = () => {
    stopped ??= (async () => {
      unregister();
      try {
        await app.close();
      } finally {
        await projector?.stop();
      }
      checker?.assertNone();
    })();
    return stopped;
  };
  // A test that fails before stopping its app must not keep the file's process (or a projector) alive.
  const unregister = stopAtFileEnd(stop);

  return {
    url: `http://127.0.0.1:${port}`,
    app,
    config,
    dataDir,
    projector,
    async createAccount({
      admin = false,
      auditor = false,
      name = 'Test User',
      age = 30,
      password = '',
    } = {}) {
      const email = `user${++accounts}-${Date.now()}@example.com`;
      password ||= `pass-${accounts}-long-enough`;
      const ids = await commands.execute(
        new OpenAccountCommand(
          { email, name, age, roles: admin ? ['admin'] : auditor ? ['auditor'] : [] },
          password,
          context,
        ),
      );
      return { ...ids, email, password };
    },
    async seedCustomers(count) {
      // The doubles answer in this process: the seed's 256 appends in flight, stamped at once, then
      // outwait their 3 s call deadline on a busy machine. Fewer at a time there.
      const slice = E2E_BACKEND === 'doubles' ? 100 : count;
      for (let done = 0; done < count; done += slice)
        await commands.execute(new SeedCustomersCommand(Math.min(slice, count - done), context));
      await settle();
    },
    settle,
    stop,
    async destroy() {
      await stop();
      await discardBackend(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
      // Kept beside DATA_DIR by default, so that it outlives it (docs/operations.md).
      rmSync(config.erasureLog, { force: true });
    },
  };
}

/** Polls /health/ready until it answers 200. */
async function untilReady(url: string): Promise<void> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    const response = await fetch(`${url}/health/ready`);
    if (response.status === 200) return;
    if (Date.now() > deadline) {
      throw new Error(
        `Not ready within ${SETTLE_TIMEOUT_MS} ms: ${response.status} ${await response.text()}`,
      );
    }
    await response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Polls the projector's checkpoint in the read store until it covers `head`. */
/** Waits until the read models' checkpoint, this process's or the projector's, reaches `head`. */
async function checkpointReaches(
  readStore: ReadStore,
  head: Position,
  projector: AppProcess | null,
): Promise<void> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    const checkpoint = await readStore.getCheckpoint(READ_MODELS_CHECKPOINT);
    if (checkpoint && comparePositions(checkpoint, head) >= 0) return;
    const exit = projector?.exit();
    if (exit) throw new Error(`The projector exited (${JSON.stringify(exit)}):\n${projector!.output()}`);
    if (Date.now() > deadline) {
      throw new Error(
        `The read models' checkpoint (${checkpoint ? formatPosition(checkpoint) : 'none'}) did not reach ` +
          `${formatPosition(head)} within ${SETTLE_TIMEOUT_MS} ms` +
          (projector ? `; the projector's output:\n${projector.output()}` : ''),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export const basic = (account: { email: string; password: string }): string =>
  `Basic ${Buffer.from(`${account.email}:${account.password}`).toString('base64')}`;

export async function issueToken(
  url: string,
  account: Pick<TestAccount, 'email' | 'password'>,
): Promise<string> {
  const response = await fetch(`${url}/api/v1/account/tokens`, {
    method: 'POST',
    headers: { authorization: basic(account) },
  });
  if (response.status !== 201)
    throw new Error(`token request failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request with exactly the raw headers given (fetch cannot repeat Authorization). */
export function rawRequest(
  url: string,
  method: string,
  rawHeaders: string[],
  body?: string,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method, headers: ['host', new URL(url).host, ...rawHeaders] },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * A request as `as`, with a JSON body (a merge patch for PATCH, unless `contentType` says
 * otherwise; a string is sent as it is) and any other headers.
 */
export function sendAs(
  as: Pick<TestAccount, 'email' | 'password'>,
  url: string,
  method: 'GET' | 'POST' | 'PATCH',
  body?: unknown,
  { contentType, headers = {} }: { contentType?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  const type = contentType ?? (method === 'PATCH' ? 'application/merge-patch+json' : 'application/json');
  return fetch(url, {
    method,
    headers: {
      authorization: basic(as),
      ...(body === undefined ? {} : { 'content-type': type }),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}
