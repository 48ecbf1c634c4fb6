import { rmSync } from 'node:fs';
import { jsonLines, runCliWithInput } from '../e2e/support/cli-process';
import { basic, newDataDir } from '../e2e/support/test-app';
import { createFaultAdmin, FAULT_ADMIN, startApi, stopRunning } from './support/api-process';

/**
 * Idempotency-Key across instances: two API processes on one DATA_DIR (the embedded default's
 * idempotency.db is shared by every process on it) receive the same key at the same moment.
 */

const ROUNDS = 20;

describe('Idempotency-Key on two instances', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = newDataDir();
    await createFaultAdmin(dataDir);
  });

  afterEach(async () => {
    await stopRunning();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes exactly one event per key when both instances receive it in parallel', async () => {
    const instances = await Promise.all([startApi(dataDir), startApi(dataDir)]);
    const post = (url: string, round: number) =>
      fetch(`${url}/customers`, {
        method: 'POST',
        headers: {
          authorization: basic(FAULT_ADMIN),
          'content-type': 'application/json',
          'idempotency-key': `round-${round}`,
        },
        body: JSON.stringify({ name: `Customer ${round}`, email: `c${round}@example.com` }),
      });
    const outcomes: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(instances.map((instance) => post(instance.url, round)));
      const bodies = await Promise.all(answers.map((answer) => answer.text()));
      const statuses = answers.map((answer) => answer.status).sort();
      outcomes.push(statuses.join('+'));
      // One ran; the other got its answer again, or was told it was still running.
      expect(
        [
          ['201', '201'],
          ['201', '409'],
        ].map((pair) => pair.join('+')),
      ).toContain(statuses.join('+'));
      if (statuses[1] === 201) expect(bodies[0]).toBe(bodies[1]);
    }
    const audit = await runCliWithInput(dataDir, null, 'audit', '--type', 'CustomerRegistered.v1');
    expect(audit.code).toBe(0);
    const registered = jsonLines(audit.stdout).filter((line) => line.type === 'CustomerRegistered.v1');
    expect(registered).toHaveLength(ROUNDS);
    expect(new Set(registered.map((event) => (event.data as { name: string }).name)).size).toBe(ROUNDS);
    // Both outcomes of the race happen; each round still wrote once.
    expect(outcomes.length).toBe(ROUNDS);
  });
});
