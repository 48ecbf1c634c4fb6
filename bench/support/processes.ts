import { type ChildProcess, execFile, fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const ROOT = resolve(__dirname, '..', '..');

/** Built code the bench runs: this worktree's dist/, or a baseline commit's (support/baseline.ts). */
export interface Build {
  /** How figures name it: 'current', or 'baseline <commit>'. */
  name: string;
  /** The directory holding its dist/ and node_modules. */
  root: string;
  /** A baseline's commit (the current build's is its report section's). */
  commit?: string;
}

export const CURRENT: Build = { name: 'current', root: ROOT };

const apiMain = (build: Build): string => join(build.root, 'dist/apps/api/src/main.js');
const cliMain = (build: Build): string => join(build.root, 'dist/apps/cli/src/main.js');
/** This run's data directories, under bench/.work (ignored by git and eslint); removed at the end. */
const WORK_DIR = join(ROOT, 'bench/.work', `run-${process.pid}`);

/** Every process the bench started and has not yet seen exit: stopped whatever happens. */
const children = new Set<ChildProcess>();

function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Kills whatever is still running (a failed benchmark, Ctrl-C) and removes the scratch space. */
export function cleanUp(): void {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
  rmSync(WORK_DIR, { recursive: true, force: true });
}

export function assertBuilt(): void {
  if (!existsSync(apiMain(CURRENT)) || !existsSync(cliMain(CURRENT))) {
    throw new Error('dist/ is missing: run `npm run build` (npm run bench does it first)');
  }
}

/** A fresh directory under bench/.work for one data set or one server. */
export function scratchDir(name: string): string {
  mkdirSync(WORK_DIR, { recursive: true });
  return mkdtempSync(join(WORK_DIR, `${name}-`));
}

/** A port nothing listens on right now, on the loopback interface. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('No port');
  return address.port;
}

/** The environment every Chronicle process of the bench gets: embedded default, quiet logs. */
export function chronicleEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  // No metrics listener: benchmarks may run servers side by side (the request histogram still counts).
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    METRICS_PORT: '0',
    ...extra,
  };
  delete env.EVENTSTORE_URL;
  delete env.MONGODB_URI;
  delete env.SMTP_URL;
  return env;
}

export interface RunningProcess {
  readonly pid: number;
  readonly url: string;
  /** Milliseconds from spawn to the first 200 from the readiness probe. */
  readonly startupMs: number;
  /** Milliseconds from spawn to the first answer of any status from it: the server listens. */
  readonly listeningMs: number;
  /** Resident set size now, in bytes (Linux /proc). */
  rss(): number;
  stop(): Promise<void>;
}

/** Starts the built API server (`node dist/apps/api/src/main.js`) and waits until it is ready. */
export async function startServer(
  dataDir: string,
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
  build: Build = CURRENT,
): Promise<RunningProcess> {
  const port = await freePort();
  const started = performance.now();
  const child = track(
    spawn(process.execPath, [...profilerArgs(), ...nodeArgs, apiMain(build)], {
      cwd: build.root,
      env: chronicleEnv(dataDir, { PORT: String(port), ...env }),
      stdio: ['ignore', 'ignore', 'pipe'],
    }),
  );
  return running(child, `http://127.0.0.1:${port}`, '/health/ready', started);
}

/** BENCH_CPU_PROF=<dir>: every server the bench starts writes a V8 CPU profile there when it stops. */
function profilerArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  return dir ? ['--cpu-prof', '--cpu-prof-dir', resolve(dir)] : [];
}

/** Starts a TypeScript entry point of the bench in a child process with an IPC channel. */
export async function startTsProcess(
  file: string,
  env: NodeJS.ProcessEnv,
  readinessPath: string,
): Promise<RunningProcess & { child: ChildProcess }> {
  const port = await freePort();
  const started = performance.now();
  const child = track(
    fork(file, [], {
      cwd: ROOT,
      env: { ...env, PORT: String(port), SWC_NODE_PROJECT: join(ROOT, 'tsconfig.json') },
      execArgv: [...profilerArgs(), '-r', '@swc-node/register'],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    }),
  );
  return { child, ...(await running(child, `http://127.0.0.1:${port}`, readinessPath, started)) };
}

async function running(
  child: ChildProcess,
  url: string,
  readinessPath: string,
  started: number,
): Promise<RunningProcess> {
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = once(child, 'exit');
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(killer);
  };
  let listeningMs = 0;
  try {
    listeningMs = (await waitForOk(`${url}${readinessPath}`, child, () => stderr)) - started;
  } catch (error) {
    await stop();
    throw error;
  }
  const pid = child.pid ?? 0;
  return {
    pid,
    url,
    startupMs: performance.now() - started,
    listeningMs,
    rss: () => residentBytes(pid),
    stop,
  };
}

/** Resolves, once `url` answers 200, with when it first answered at all (performance.now()). */
async function waitForOk(url: string, child: ChildProcess, stderr: () => string): Promise<number> {
  const deadline = Date.now() + 15 * 60_000;
  let answered: number | null = null;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${url}: the process exited (${child.exitCode ?? child.signalCode}):\n${stderr()}`);
    }
    try {
      const response = await fetch(url);
      answered ??= performance.now();
      await response.arrayBuffer();
      if (response.ok) return answered;
    } catch {
      // Not listening yet.
    }
    await sleep(20);
  }
  throw new Error(`${url}: not ready after 15 minutes`);
}

function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!match) throw new Error(`No VmRSS for process ${pid}`);
  return Number(match[1]) * 1024;
}

/** Runs the built CLI on `dataDir` and returns its JSON output (one value per line). */
export function runCli(dataDir: string, args: string[], build: Build = CURRENT): Promise<unknown[]> {
  return new Promise((resolveRun, reject) => {
    track(
      execFile(
        process.execPath,
        [cliMain(build), ...args],
        { cwd: build.root, env: chronicleEnv(dataDir), maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (error) {
            reject(new Error(`chronicle ${args.join(' ')} failed: ${stderr || error.message}`));
            return;
          }
          resolveRun(
            stdout
              .split('\n')
              .filter((line) => line.trim() !== '')
              .map((line) => JSON.parse(line) as unknown),
          );
        },
      ),
    );
  });
}
