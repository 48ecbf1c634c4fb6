import { usersDataSet } from '../support/datasets';
import { runCli } from '../support/processes';
import { figure } from '../support/report';
import { round, spread } from '../support/stats';
import type { Benchmark } from './benchmark';

const EVENTS = 1_000_000;
const RUNS = 3;

/**
 * `chronicle audit verify` (the built CLI, its own process, start-up included) walking the hash
 * chain of 1,000,000 events: every event read as stored and hashed again.
 */
export const verify: Benchmark = {
  name: 'verify',
  title: 'audit verify: the hash chain of 1,000,000 events, embedded store',
  async run() {
    const dataSet = await usersDataSet(EVENTS);
    const seconds: number[] = [];
    let events = 0;
    for (let run = 0; run < RUNS; run++) {
      const started = performance.now();
      const [result] = (await runCli(dataSet.dir, ['audit', 'verify'])) as Array<{
        ok: boolean;
        events: number;
      }>;
      seconds.push((performance.now() - started) / 1000);
      if (!result.ok)
        throw new Error(`audit verify found the seeded chain broken: ${JSON.stringify(result)}`);
      events = result.events;
    }
    const time = spread(seconds);
    return {
      name: this.name,
      title: this.title,
      figures: [
        figure({ name: 'audit verify', unit: 's', value: spread(seconds.map((s) => round(s, 2))) }),
        figure({
          name: 'events verified per second',
          unit: 'events/s',
          value: spread(seconds.map((s) => Math.round(events / s))),
        }),
      ],
      notes: [
        `${events} events (${EVENTS} users registered, and the admin's account): ${RUNS} runs, each a new CLI process.`,
        `Median ${round(time.median, 2)} s.`,
      ],
    };
  },
};
