import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
/** Enough of the log to explain a failure. */
const MAX_OUTPUT_CHARS = 256 * 1024;

export interface ProjectorExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ProjectorProcess {
  readonly pid: number;
  /** What it has written to stdout and stderr so far (its JSON log lines). */
  output(): string;
  /** Resolves once the output matches `pattern`; rejects if the process exits first or `ms` pass. */
  waitForOutput(pattern: RegExp, ms?: number): Promise<void>;
  /** Null while it runs. */
  exit(): ProjectorExit | null;
  readonly exited: Promise<ProjectorExit>;
  /** SIGTERM, then waits for it to exit; rejects (after a SIGKILL) if it takes over `ms`. */
  stop(ms?: number): Promise<ProjectorExit>;
}

/** The projector (apps/projector) as its own process, from source, with `env` over the test's environment. */
export function startProjector(env: Record<string, string>): ProjectorProcess {
  return startAppProcess('projector', env);
}

/** An app (apps/<app>) as its own process, from source, with `env` over the test's environment. */
export function startAppProcess(app: 'api' | 'projector', env: Record<string, string>): ProjectorProcess {
  const child: ChildProcess = spawn(
    process.execPath,
    ['-r', '@swc-node/register', join(ROOT, `apps/${app}/src/main.ts`)],
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

  let exit: ProjectorExit | null = null;
  const exited = new Promise<ProjectorExit>((resolve) => {
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

export function describeExit(exit: ProjectorExit): string {
  return exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
}
