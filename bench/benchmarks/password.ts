import * as argon2 from 'argon2';
import { ARGON2_OPTIONS } from '@chronicle/auth';
import { ADMIN, adminDataSet } from '../support/datasets';
import { compareLoads, loadFigures, loadNotes } from '../support/load';
import { startServer } from '../support/processes';
import { figure } from '../support/report';
import { spread } from '../support/stats';
import type { Benchmark } from './benchmark';

const HASHES = 10;
const CONNECTIONS = 64;
/** The highest limits the configuration accepts: the bench measures the work, not the limiter. */
const RAISED_LIMIT = '1000000';
const RESETS = 'reset requests answered 202';

async function hashMilliseconds(): Promise<number[]> {
  const times: number[] = [];
  // One untimed hash first: the addon's first call pays for loading and allocation.
  await argon2.hash('bench warm-up passphrase', ARGON2_OPTIONS);
  for (let i = 0; i < HASHES; i++) {
    const started = performance.now();
    await argon2.hash(`bench passphrase ${i}`, ARGON2_OPTIONS);
    times.push(performance.now() - started);
  }
  return times;
}

export const password: Benchmark = {
  name: 'password',
  title:
    'Argon2id hashing, and reset requests (PUT /api/v1/account/password {email}) with the limiter raised',
  async run() {
    const hash = spread(await hashMilliseconds());
    const dataSet = await adminDataSet('password');
    const server = await startServer(dataSet.dir, {
      RESET_REQUESTS_PER_EMAIL: RAISED_LIMIT,
      RESET_REQUESTS_PER_CLIENT: RAISED_LIMIT,
    });
    let resets;
    let loads;
    try {
      loads = await compareLoads([
        {
          name: RESETS,
          url: server.url,
          pid: server.pid,
          connections: CONNECTIONS,
          requests: () => [
            [
              {
                method: 'PUT',
                path: '/api/v1/account/password',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ email: ADMIN.email }),
              },
            ],
          ],
        },
      ]);
      resets = loads.targets.get(RESETS);
      if (!resets) throw new Error('No figures for reset requests');
    } finally {
      await server.stop();
    }
    const { memoryCost, timeCost, parallelism } = ARGON2_OPTIONS;
    return {
      name: this.name,
      title: this.title,
      figures: [
        figure({ name: 'one Argon2id hash', unit: 'ms', value: hash }),
        ...loadFigures({ label: RESETS, subject: resets }),
      ],
      notes: [
        `Argon2id parameters: m = ${memoryCost} KiB (${Math.round(memoryCost / 1024)} MiB), t = ${timeCost}, ` +
          `p = ${parallelism}; ${HASHES} hashes, one at a time.`,
        `Reset requests: ${CONNECTIONS} connections, all for one existing address, so each appends its event ` +
          'and the saga writes an e-mail to the outbox meanwhile; RESET_REQUESTS_PER_EMAIL and ' +
          `RESET_REQUESTS_PER_CLIENT = ${RAISED_LIMIT}.`,
        ...loadNotes(loads),
      ],
    };
  },
};
