import { ProjectorProcess, startAppProcess } from '../../e2e/support/projector-process';
import { freePort } from '../../support/free-port';

export interface Api {
  url: string;
  process: ProjectorProcess;
}

/** The API processes a test started and has not stopped: the test file's afterEach stops them. */
export const running = new Set<ProjectorProcess>();

/** Stops every API process a test left running (for afterEach and afterAll). */
export async function stopRunning(): Promise<void> {
  await Promise.all([...running].map((child) => child.stop().catch(() => undefined)));
  running.clear();
}

/** The API on `dataDir` as a child process, once it answers /health/live. */
export async function startApi(dataDir: string, env: Record<string, string> = {}): Promise<Api> {
  const port = await freePort();
  const child = startAppProcess('api', {
    DATA_DIR: dataDir,
    PORT: String(port),
    LOG_LEVEL: 'info',
    // Limits are another issue's: here many requests for one address must get through.
    RESET_REQUESTS_PER_EMAIL: '100',
    RESET_REQUESTS_PER_CLIENT: '100',
    ...env,
  });
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
    if (Date.now() > deadline) throw new Error(`The API did not listen within 30 s:\n${child.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** SIGKILL: no shutdown hook runs. */
export async function kill9(api: Api): Promise<void> {
  process.kill(api.process.pid, 'SIGKILL');
  await api.process.exited;
  running.delete(api.process);
}
