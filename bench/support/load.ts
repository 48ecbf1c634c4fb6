import autocannon from 'autocannon';
import { type Spread, spread } from './stats';

/** Rounds and their length; BENCH_ROUNDS, BENCH_SECONDS and BENCH_WARMUP shorten a trial run. */
export const ROUNDS = positiveEnv('BENCH_ROUNDS', 5);
export const ROUND_SECONDS = positiveEnv('BENCH_SECONDS', 5);
export const WARMUP_SECONDS = positiveEnv('BENCH_WARMUP', 3);

function positiveEnv(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

export interface LoadTarget {
  name: string;
  options: Omit<autocannon.Options, 'duration'>;
}

export interface LoadFigures {
  /** Requests per second answered with a 2xx. */
  rps: Spread;
  /** Latency in milliseconds. */
  p50: Spread;
  p99: Spread;
  /** Mean latency in milliseconds, from the request rate: exact where autocannon rounds to 1 ms. */
  meanMs: Spread;
  requests: number;
}

/**
 * Loads each target for a warm-up, then `ROUNDS` rounds taken in turn (A, B, A, B...), so that a
 * noisy neighbour slows every target alike instead of one of them.
 */
export async function compareLoads(
  targets: LoadTarget[],
  timing: { seconds: number; warmupSeconds: number } = {
    seconds: ROUND_SECONDS,
    warmupSeconds: WARMUP_SECONDS,
  },
): Promise<Map<string, LoadFigures>> {
  for (const target of targets) await load(target, timing.warmupSeconds);
  const results = new Map<string, autocannon.Result[]>(targets.map((target) => [target.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of targets) {
      const result = await load(target, timing.seconds);
      results.get(target.name)?.push(result);
    }
  }
  return new Map(
    targets.map((target) => {
      const rounds = results.get(target.name) ?? [];
      const connections = target.options.connections ?? 10;
      return [
        target.name,
        {
          rps: spread(rounds.map((result) => result['2xx'] / result.duration)),
          p50: spread(rounds.map((result) => result.latency.p50)),
          p99: spread(rounds.map((result) => result.latency.p99)),
          meanMs: spread(rounds.map((result) => (1000 * connections * result.duration) / result['2xx'])),
          requests: rounds.reduce((sum, result) => sum + result['2xx'], 0),
        },
      ];
    }),
  );
}

/** One autocannon run; any error or non-2xx answer makes the figures meaningless, so it throws. */
export async function load(target: LoadTarget, seconds: number): Promise<autocannon.Result> {
  const result = await autocannon({ timeout: 30, ...target.options, duration: seconds });
  if (result.errors > 0 || result.non2xx > 0 || result['2xx'] === 0) {
    const codes = Object.entries(result.statusCodeStats)
      .map(([code, stats]) => `${code}: ${stats.count}`)
      .join(', ');
    throw new Error(
      `${target.name}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx (${codes})`,
    );
  }
  return result;
}
