import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startEsdbDouble } from '../../doubles/esdb/esdb-double';
import { startMongoDouble } from '../../doubles/mongo/mongo-double';
import { stopAtFileEnd } from './backend';
import { cliCommand } from './cli-process';

/** Preloaded into an API process (startApi's `preloads`) to run its clock CLOCK_OFFSET_MS ahead. */
export const CLOCK_OFFSET_PRELOAD = join(__dirname, 'clock-offset.preload.ts');

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
    DATA_KEY_SECRET: randomBytes(32).toString('hex'),
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
