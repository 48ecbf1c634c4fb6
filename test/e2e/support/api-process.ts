import { ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { freePort } from '../../support/free-port';
import { startEsdbDouble } from '../../doubles/esdb/esdb-double';
import { startMongoDouble } from '../../doubles/mongo/mongo-double';
import { stopAtFileEnd } from './backend';
import { cliCommand } from './cli-process';

const ROOT = join(__dirname, '..', '..', '..');

export async function waitForHealth(url: string, server: ChildProcess): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`server exited with ${server.exitCode}`);
    try {
      if ((await fetch(`${url}/health/live`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('server did not start');
}

/** The command line that runs the API from source, with `preloads` required before it. */
export function apiCommand(preloads: string[] = []): string[] {
  return [
    process.execPath,
    '-r',
    '@swc-node/register',
    ...preloads.flatMap((preload) => ['-r', preload]),
    join(ROOT, 'apps/api/src/main.ts'),
  ];
}

export interface ApiProcess {
  url: string;
  process: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/**
 * An API server as its own process (from source) on `env`, listening on a free port and healthy;
 * `clockOffsetMs` runs its clock that far ahead of this host's, through a preload.
 */
export async function startApiProcess(
  env: Record<string, string>,
  options: { clockOffsetMs?: number } = {},
): Promise<ApiProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const preloads = options.clockOffsetMs ? [join(__dirname, 'clock-offset.preload.ts')] : [];
  const [command, ...args] = apiCommand(preloads);
  const child = spawn(command, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      SWC_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
      LOG_LEVEL: 'warn',
      // Several API processes at once: none listens for metrics unless a test asks.
      METRICS_PORT: '0',
      ...env,
      PORT: String(port),
      CLOCK_OFFSET_MS: String(options.clockOffsetMs ?? 0),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    unregister();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  const unregister = stopAtFileEnd(stop);
  try {
    await waitForHealth(url, child);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}; its output:\n${output}`);
  }
  return { url, process: child, output: () => output, stop };
}

/**
 * The production shape for several API processes: an EventStoreDB double and a MongoDB double of
 * their own, and the environment that points processes at them with one shared TOKEN_SECRET.
 */
export async function startSharedDoubles(dataDir: string, database: string) {
  const [esdb, mongo] = await Promise.all([startEsdbDouble(), startMongoDouble()]);
  const mongoUri = new URL(mongo.uri);
  mongoUri.pathname = `/${database}`;
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    EVENTSTORE_URL: esdb.connectionString,
    MONGODB_URI: mongoUri.toString(),
    TOKEN_SECRET: randomBytes(32).toString('hex'),
  };
  const stop = async () => {
    unregister();
    await esdb.stop();
    await mongo.stop();
  };
  const unregister = stopAtFileEnd(stop);
  return { env, stop };
}

let cliAccounts = 0;

/** An account made by the CLI (password on standard input) against `env`'s stores. */
export async function createAccountWithCli(dataDir: string, env: Record<string, string>) {
  const email = `cli${++cliAccounts}-${Date.now()}@example.com`;
  const password = `cli-passphrase-${cliAccounts}`;
  const { command, env: cliEnv } = await cliCommand(dataDir, [
    'accounts',
    'create',
    '--email',
    email,
    '--password-stdin',
    '--name',
    'Made By The CLI',
    '--age',
    '40',
  ]);
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = execFile(command[0], command.slice(1), { env: { ...cliEnv, ...env } }, (error, out, err) =>
      error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out),
    );
    child.stdin?.end(password);
  });
  const { accountId, userId } = JSON.parse(stdout) as { accountId: string; userId: string };
  return { accountId, userId, email, password };
}
