import { rmSync } from 'node:fs';
import { runCliProcess } from '../e2e/support/cli-process';
import { newDataDir } from '../e2e/support/test-app';
import { running, startApi } from './support/api-process';

/** Start-up on a store with history (issue 21): the API listens first, then catches up, saying so. */

interface LogLine {
  msg?: string;
  context?: string;
}

const lines = (output: string): LogLine[] =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);

describe('start-up', () => {
  let dataDir: string;

  beforeEach(() => {
    dataDir = newDataDir();
  });

  afterEach(async () => {
    await Promise.all([...running].map((child) => child.stop().catch(() => undefined)));
    running.clear();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('listens before it has replayed the history; readiness is 503 with the progress until caught up', async () => {
    const seeded = await runCliProcess(dataDir, 'customers', 'seed', '--count', '20000');
    expect(seeded.code).toBe(0);

    const api = await startApi(dataDir);
    const statuses: number[] = [];
    let progress: unknown = null;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
      const ready = await fetch(`${api.url}/health/ready`);
      statuses.push(ready.status);
      const body = (await ready.json()) as { checks?: Record<string, unknown> };
      if (ready.status === 200) break;
      progress ??= body.checks?.readModels;
      expect(ready.headers.get('retry-after')).toBe('5');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await api.process.waitForOutput(/Caught up/);

    const log = lines(api.process.output());
    const listening = log.findIndex((line) => /successfully started/.test(line.msg ?? ''));
    const caughtUp = log.findIndex(
      (line) => line.context === 'EventProcessor(read-models)' && /^Caught up/.test(line.msg ?? ''),
    );
    expect(listening).toBeGreaterThanOrEqual(0);
    expect(caughtUp).toBeGreaterThan(listening);
    expect(statuses.at(-1)).toBe(200);
    // Asked as soon as it listens, while the replay is under way: 503, saying how far it is.
    expect(statuses[0]).toBe(503);
    expect(progress).toMatchObject({
      status: 'down',
      message: 'catching up with the event history',
      head: expect.stringMatching(/^\d+$/),
    });
  });
});
