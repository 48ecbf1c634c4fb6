import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { builtCommand } from '../../support/built';
import { backendEnv } from './backend';

const ROOT = join(__dirname, '..', '..', '..');

export interface CliResult {
  code: number;
  /** The signal that ended it (SIGABRT for a native abort), or null. */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The CLI as its own process (built: test/support/built.ts), on the data directory (and its stores, on the doubles). */
export function runCliProcess(dataDir: string, ...args: string[]): Promise<CliResult> {
  return runCliWithInput(dataDir, null, ...args);
}

/** The same, with `input` written to its standard input (null: an empty pipe). */
export function runCliWithInput(
  dataDir: string,
  input: string | null,
  ...args: string[]
): Promise<CliResult> {
  return runCliWith({ dataDir, input }, ...args);
}

/**
 * The same, with Node options (such as GC_PRESSURE, or a preload), and `env` over the
 * data directory's stores (another EventStoreDB database, say).
 */
export async function runCliWith(
  {
    dataDir,
    input = null,
    nodeOptions = [],
    env: extra = {},
  }: {
    dataDir: string;
    input?: string | null;
    nodeOptions?: readonly string[];
    env?: Record<string, string>;
  },
  ...args: string[]
): Promise<CliResult> {
  const { command, env } = await cliCommand(dataDir, args, nodeOptions, extra);
  return new Promise((resolve) => {
    const child = execFile(
      command[0],
      command.slice(1),
      { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({
          code: error ? Number(error.code ?? 1) : 0,
          signal: error?.signal ?? null,
          stdout,
          stderr,
        }),
    );
    child.stdin?.end(input ?? undefined);
  });
}

/** The command line and environment that run the CLI on `dataDir`. */
export async function cliCommand(
  dataDir: string,
  args: string[],
  nodeOptions: readonly string[] = [],
  extra: Record<string, string> = {},
): Promise<{ command: string[]; env: NodeJS.ProcessEnv }> {
  const stores = await backendEnv(dataDir);
  return {
    command: [process.execPath, ...builtCommand('cli', nodeOptions), ...args],
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      ...stores,
      ...extra,
      SWC_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
    },
  };
}

/** The CLI's exit code and its first JSON line on stdout (or, when it printed none there, on stderr). */
export async function runCliJson(
  options: Parameters<typeof runCliWith>[0],
  ...args: string[]
): Promise<{ code: number; json: Record<string, any> }> {
  const result = await runCliWith(options, ...args);
  const [json] = jsonLines(result.stdout || result.stderr);
  return { code: result.code, json };
}

/** JSON lines as objects. */
export const jsonLines = (text: string): Array<Record<string, any>> =>
  text
    .trim()
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, any>);
