import autocannon from 'autocannon';
import { ownCpuSeconds, processCpuSeconds } from './cpu';
import { type Figure, figure, formatSpread, type Target } from './report';
import { type Spread, spread, variation } from './stats';

/** Rounds and their length; BENCH_ROUNDS, BENCH_SECONDS and BENCH_WARMUP shorten a trial run. */
export const ROUNDS = positiveEnv('BENCH_ROUNDS', 5);
export const ROUND_SECONDS = positiveEnv('BENCH_SECONDS', 5);
export const WARMUP_SECONDS = positiveEnv('BENCH_WARMUP', 3);

/** A positive whole number from the environment variable `name`, else `fallback`. */
export function positiveEnv(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

/**
 * The offered rate of a round's paced loads, as a share of the slowest target's throughput at
 * full load in that round: well below what any of them saturates, so each answers all it is offered.
 */
const PACED_SHARE = 0.5;
/** Above this share of one core, the load generator may be what limits a throughput figure. */
export const CLIENT_BOUND_CORES = 0.8;

export type Phase = 'full' | 'paced';

export interface LoadTarget {
  name: string;
  url: string;
  /** The server process answering: its CPU time over a round is read from /proc/<pid>/stat. */
  pid: number;
  connections: number;
  /**
   * Pre-built requests (no per-request callback in the generator), asked for before each load.
   * One list is walked in turn by every connection; with several lists, each gets its own
   * generator and an equal share of the connections (requests that must not be sent twice at
   * once, such as patches changing a value).
   */
  requests(): autocannon.Request[][];
  /**
   * Each request's `[<id>]` replaced by an id the generator makes for that request alone, unique
   * across generators (autocannon's idReplacement): a value that must never repeat, such as an
   * Idempotency-Key, at the cost of building each request as it is sent instead of once.
   */
  uniqueIds?: boolean;
  /** Called before each measured load; what it returns is called with the load's result. */
  observe?: (phase: Phase) => Promise<(result: LoadResult) => Promise<void>>;
}

/** One load of one target: autocannon's figures with the CPU both sides used. */
export interface LoadResult {
  /** Requests answered with a 2xx. */
  requests: number;
  seconds: number;
  p50: number;
  p99: number;
  /** The server's CPU seconds (user and system) over the load. */
  serverCpuSeconds: number;
  /** This process's (the generator's) CPU seconds over the load. */
  generatorCpuSeconds: number;
}

export interface LoadFigures {
  /** Server CPU milliseconds per request at the offered rate: the primary figure. */
  cpuMsPerRequest: Spread;
  /** Requests per second answered with a 2xx at full load. */
  rps: Spread;
  /** Server CPU milliseconds per request at full load. */
  fullLoadCpuMsPerRequest: Spread;
  /** The generator's CPU at full load, in cores (CPU seconds per second). */
  generatorCores: Spread;
  /** Full-load rounds in which the generator used more than CLIENT_BOUND_CORES. */
  clientBoundRounds: number;
  /** Latency in milliseconds at full load. */
  p50: Spread;
  p99: Spread;
  /** Mean latency in milliseconds, from the request rate: exact where autocannon rounds to 1 ms. */
  meanMs: Spread;
  /** Requests per second answered at the offered rate (equal to it unless the server saturated). */
  pacedRps: Spread;
  requests: number;
}

export interface LoadComparison {
  /** The rate offered to every target in a paced round, requests per second; none without them. */
  rate?: Spread;
  targets: Map<string, LoadFigures>;
}

export interface LoadTiming {
  seconds: number;
  warmupSeconds: number;
  /**
   * Paced rounds (the same offered rate for every target) beside the full-load rounds: the CPU
   * figure from a load no target saturates. Without them it comes from the full-load rounds (one
   * connection, where the generator waits on every answer).
   */
  paced: boolean;
  /** Run at the start of every round, e.g. a ceiling that is not an HTTP load. */
  eachRound?: () => Promise<void>;
}

/**
 * Loads each target for a warm-up, then `ROUNDS` rounds taken in turn (A, B, A, B...), so that a
 * noisy neighbour slows every target alike instead of one of them. Each round loads each target at
 * full load (throughput, latency), then at the offered rate (CPU time per request).
 */
export async function compareLoads(
  targets: LoadTarget[],
  timing: LoadTiming = { seconds: ROUND_SECONDS, warmupSeconds: WARMUP_SECONDS, paced: true },
): Promise<LoadComparison> {
  for (const target of targets) await load(target, timing.warmupSeconds);
  const rates: number[] = [];
  const full = new Map<string, LoadResult[]>(targets.map((target) => [target.name, []]));
  const paced = new Map<string, LoadResult[]>(targets.map((target) => [target.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    await timing.eachRound?.();
    const fullRound: LoadResult[] = [];
    for (const target of targets) {
      const result = await observed(target, 'full', timing.seconds);
      full.get(target.name)?.push(result);
      fullRound.push(result);
    }
    if (!timing.paced) continue;
    // This round's rate: the machine's load changes between rounds, the rate follows it.
    const slowest = Math.min(...fullRound.map((result) => result.requests / result.seconds));
    const rate = Math.max(1, Math.floor(PACED_SHARE * slowest));
    rates.push(rate);
    for (const target of targets)
      paced.get(target.name)?.push(await observed(target, 'paced', timing.seconds, rate));
  }
  const rate = timing.paced ? spread(rates) : undefined;
  return {
    rate,
    targets: new Map(
      targets.map((target) => {
        const fullRounds = full.get(target.name) ?? [];
        const pacedRounds = paced.get(target.name) ?? [];
        const cpuMs = (result: LoadResult): number => (1000 * result.serverCpuSeconds) / result.requests;
        const cores = fullRounds.map((result) => result.generatorCpuSeconds / result.seconds);
        return [
          target.name,
          {
            cpuMsPerRequest: spread((rate ? pacedRounds : fullRounds).map(cpuMs)),
            rps: spread(fullRounds.map((result) => result.requests / result.seconds)),
            fullLoadCpuMsPerRequest: spread(fullRounds.map(cpuMs)),
            generatorCores: spread(cores),
            clientBoundRounds: cores.filter((used) => used > CLIENT_BOUND_CORES).length,
            p50: spread(fullRounds.map((result) => result.p50)),
            p99: spread(fullRounds.map((result) => result.p99)),
            meanMs: spread(
              fullRounds.map((result) => (1000 * target.connections * result.seconds) / result.requests),
            ),
            pacedRps: spread(
              (rate ? pacedRounds : fullRounds).map((result) => result.requests / result.seconds),
            ),
            requests: fullRounds.reduce((sum, result) => sum + result.requests, 0),
          },
        ];
      }),
    ),
  };
}

async function observed(
  target: LoadTarget,
  phase: Phase,
  seconds: number,
  rate?: number,
): Promise<LoadResult> {
  const done = await target.observe?.(phase);
  const result = await load(target, seconds, rate);
  await done?.(result);
  return result;
}

/**
 * One load of a target, at full load or at an offered `rate` (requests per second over all
 * connections), with the CPU the server and the generator used meanwhile. Any error or non-2xx
 * answer makes the figures meaningless, so it throws.
 */
export async function load(target: LoadTarget, seconds: number, rate?: number): Promise<LoadResult> {
  const lists = target.requests();
  const generators = lists.length;
  const serverBefore = processCpuSeconds(target.pid);
  const generatorBefore = ownCpuSeconds();
  const results = await Promise.all(
    lists.map((requests, index) =>
      autocannon({
        url: target.url,
        timeout: 30,
        connections: share(target.connections, generators, index),
        requests,
        duration: seconds,
        ...(rate === undefined ? {} : { overallRate: share(rate, generators, index) }),
        ...(target.uniqueIds ? { idReplacement: true } : {}),
      }),
    ),
  );
  const serverCpuSeconds = processCpuSeconds(target.pid) - serverBefore;
  const generatorCpuSeconds = ownCpuSeconds() - generatorBefore;
  const requests = results.reduce((sum, result) => sum + result['2xx'], 0);
  for (const result of results) {
    if (result.errors > 0 || result.non2xx > 0 || requests === 0) {
      const codes = Object.entries(result.statusCodeStats)
        .map(([code, stats]) => `${code}: ${stats.count}`)
        .join(', ');
      throw new Error(
        `${target.name}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx (${codes})`,
      );
    }
  }
  // Several generators: latency percentiles are not merged, the slowest generator's are taken.
  return {
    requests,
    seconds: Math.max(...results.map((result) => result.duration)),
    p50: Math.max(...results.map((result) => result.latency.p50)),
    p99: Math.max(...results.map((result) => result.latency.p99)),
    serverCpuSeconds,
    generatorCpuSeconds,
  };
}

/** The `index`th of `parts` near-equal whole shares of `total`, each at least 1. */
function share(total: number, parts: number, index: number): number {
  return Math.max(1, Math.floor(total / parts) + (index < total % parts ? 1 : 0));
}

/** A ceiling whose rounds spread more than this around their median makes the run suspect. */
const CEILING_VARIATION = 0.15;

/**
 * The figures of one load, each beside its ceiling's: the server's CPU time per request at the
 * offered rate (the ratio, ceiling over subject, is what `target` judges), then throughput (the
 * ratio subject over ceiling, judged by `throughputTarget` when given) and latency at full load,
 * the throughput marked client-bound when the generator was.
 */
export function loadFigures(options: {
  label: string;
  subject: LoadFigures;
  ceiling?: { name: string; figures: LoadFigures };
  target?: Target;
  throughputTarget?: Target;
}): Figure[] {
  const { label, subject, ceiling, target, throughputTarget } = options;
  const beside = (pick: (figures: LoadFigures) => Spread): Figure['ceiling'] =>
    ceiling ? { name: ceiling.name, value: pick(ceiling.figures) } : undefined;
  return [
    figure({
      name: `server CPU per request (${label})`,
      unit: 'ms',
      value: subject.cpuMsPerRequest,
      ceiling: beside((figures) => figures.cpuMsPerRequest),
      ratio: ceiling ? ceiling.figures.cpuMsPerRequest.median / subject.cpuMsPerRequest.median : undefined,
      target,
    }),
    figure({
      name: `requests/s at full load (${label})`,
      unit: 'req/s',
      value: subject.rps,
      ceiling: beside((figures) => figures.rps),
      ratio: ceiling ? subject.rps.median / ceiling.figures.rps.median : undefined,
      target: throughputTarget,
      clientBound: subject.clientBoundRounds > 0 || (ceiling?.figures.clientBoundRounds ?? 0) > 0,
    }),
    figure({
      name: `p50 latency at full load (${label})`,
      unit: 'ms',
      value: subject.p50,
      ceiling: beside((figures) => figures.p50),
    }),
    figure({
      name: `p99 latency at full load (${label})`,
      unit: 'ms',
      value: subject.p99,
      ceiling: beside((figures) => figures.p99),
    }),
  ];
}

/** What a reader needs to trust the load figures: the rate, the generator, the ceiling's spread. */
export function loadNotes(comparison: LoadComparison, ceiling?: string): string[] {
  const notes: string[] = [];
  if (comparison.rate) {
    notes.push(
      `CPU per request: the server's user and system time (/proc/<pid>/stat) over a round at an offered rate, ` +
        `over the requests it answered; each round offers every server the same rate, ${PACED_SHARE} of the ` +
        `slowest one's throughput at full load in that round: ${formatSpread(comparison.rate, 'req/s')}.`,
    );
  }
  for (const [name, figures] of comparison.targets) {
    const paced = comparison.rate
      ? `; answered ${formatSpread(figures.pacedRps, 'req/s')} at the offered rate`
      : '';
    notes.push(
      `${name}: the load generator used ${formatSpread(figures.generatorCores, 'cores')} at full load` +
        `${figures.clientBoundRounds > 0 ? ` (above ${CLIENT_BOUND_CORES} in ${figures.clientBoundRounds} rounds: client-bound)` : ''}${paced}.`,
    );
  }
  const measured = ceiling === undefined ? undefined : comparison.targets.get(ceiling);
  if (measured) {
    for (const [what, value] of [
      ['CPU per request', measured.cpuMsPerRequest],
      ['throughput', measured.rps],
    ] as const) {
      if (variation(value) > CEILING_VARIATION) {
        notes.push(
          `**The ceiling's ${what} varied by ${Math.round(100 * variation(value))}% across rounds** ` +
            `(more than ${100 * CEILING_VARIATION}%): the machine was not quiet; its ratio is suspect.`,
        );
      }
    }
  }
  return notes;
}
