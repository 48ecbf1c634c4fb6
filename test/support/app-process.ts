import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { builtCommand } from './built';
import { freePort } from './free-port';

/**
 * The apps (apps/api, apps/projector) as child processes, built (test/support/built.ts): the one
 * way every suite starts them (e2e, faults), so that each is killed, restarted and stopped alike.
 */

const ROOT = join(__dirname, '..', '..');
/** Enough of the log to explain a failure. */
const MAX_OUTPUT_CHARS = 256 * 1024;

export interface AppExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface AppProcess {
  readonly pid: number;
  /** What it has written to stdout and stderr so far (its JSON log lines). */
  output(): string;
  /** Resolves once the output matches `pattern`; rejects if the process exits first or `ms` pass. */
  waitForOutput(pattern: RegExp, ms?: number): Promise<void>;
  /** Null while it runs. */
  exit(): AppExit | null;
  readonly exited: Promise<AppExit>;
  /** SIGTERM, then waits for it to exit; rejects (after a SIGKILL) if it takes over `ms`. */
  stop(ms?: number): Promise<AppExit>;
}

/** The projector (apps/projector) as its own process, with `env` over the test's environment. */
export function startProjector(env: Record<string, string>): AppProcess {
  return startAppProcess('projector', env);
}

/** How a test starts an app: Node options (e.g. GC_PRESSURE), and `preloads` required before it (e.g. a clock running ahead). */
export interface AppProcessOptions {
  nodeOptions?: readonly string[];
  preloads?: string[];
}

/** An app (apps/<app>) as its own process, with `env` over the test's environment. */
export function startAppProcess(
  app: 'api' | 'projector',
  env: Record<string, string>,
  options: AppProcessOptions = {},
): AppProcess {
  const preloads = (options.preloads ?? []).flatMap((preload) => ['-r', preload]);
  const child: ChildProcess = spawn(
    process.execPath,
    builtCommand(app, [...(options.nodeOptions ?? []), ...preloads]),
    {
      cwd: ROOT,
      env: {
        ...process.env,
        SWC_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
        LOG_LEVEL: 'info',
        METRICS_PORT: '0',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-MAX_OUTPUT_CHARS);
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);

  let exit: AppExit | null = null;
  const exited = new Promise<AppExit>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      for (const listener of listeners) listener();
      resolve(exit);
    });
  });

  const waitForOutput = (pattern: RegExp, ms = 20_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (pattern.test(output)) finish();
        else if (exit)
          finish(
            new Error(`The ${app} exited (${describeExit(exit)}) before logging ${pattern}:\n${output}`),
          );
      };
      const timer = setTimeout(
        () => finish(new Error(`The ${app} did not log ${pattern} within ${ms} ms:\n${output}`)),
        ms,
      );
      const finish = (error?: Error) => {
        clearTimeout(timer);
        listeners.delete(check);
        if (error) reject(error);
        else resolve();
      };
      listeners.add(check);
      check();
    });

  return {
    pid: child.pid!,
    output: () => output,
    waitForOutput,
    exit: () => exit,
    exited,
    async stop(ms = 10_000) {
      if (exit) return exit;
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)));
      const result = await Promise.race([exited, late]);
      clearTimeout(timer);
      if (result) return result;
      child.kill('SIGKILL');
      await exited;
      throw new Error(`The ${app} did not stop within ${ms} ms of SIGTERM:\n${output}`);
    },
  };
}

export function describeExit(exit: AppExit): string {
  return exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
}

/** How `child` exited within `ms` (a start-up refusal), or `still running after N s`, then stopped. */
export async function exitWithin(child: AppProcess, ms = 15_000): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const exit = await Promise.race([
    child.exited,
    new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms))),
  ]);
  clearTimeout(timer);
  if (exit !== null) return describeExit(exit);
  await child.stop(1_000).catch(() => undefined);
  return `still running after ${ms / 1000} s`;
}

export interface Api {
  url: string;
  process: AppProcess;
}

/** The API processes started and not yet stopped: a test file's afterEach or afterAll stops them. */
export const running = new Set<AppProcess>();

/** Stops every API process a test left running. */
export async function stopRunning(): Promise<void> {
  await Promise.all([...running].map((child) => child.stop().catch(() => undefined)));
  running.clear();
}

/** The API on `dataDir` as a child process on a free port, once it answers /health/live. */
export async function startApi(
  dataDir: string,
  env: Record<string, string> = {},
  options: AppProcessOptions = {},
): Promise<Api> {
  const port = await freePort();
  const child = startAppProcess('api', { ...env, DATA_DIR: dataDir, PORT: String(port) }, options);
  running.add(child);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exit()) throw new Error(`The API exited at start:\n${child.output()}`);
    try {
      if ((await fetch(`${url}/health/live`)).ok) return { url, process: child };
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      process.kill(child.pid, 'SIGKILL');
      throw new Error(`The API did not listen within 30 s:\n${child.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** SIGKILL: no shutdown hook runs. */
export async function kill9(api: Api): Promise<void> {
  process.kill(api.process.pid, 'SIGKILL');
  await api.process.exited;
  running.delete(api.process);
}
