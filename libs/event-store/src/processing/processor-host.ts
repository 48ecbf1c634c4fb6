import { Logger } from '@nestjs/common';
import {
  BACKGROUND_JOBS,
  BackgroundHandler,
  BackgroundJob,
  BackOff,
  backOffDelay,
  ChronicleConfig,
  errorMessage,
  HOSTED_BY,
  ProcessorPlace,
  processorPlacement,
} from '@chronicle/config';
import { formatPosition, Position } from '../position';
import type { ProcessorLogger } from './event-processing';

/** A background handler's unit in one process, as its host starts, stops and watches it. */
export interface HostedProcessor {
  /**
   * Starts it in the background. What it returns resolves once it has caught up (or runs); a
   * unit that can end on its own (a worker thread) calls `ended`, saying why, and is started again.
   */
  start(ended: (why: string) => void): Promise<void> | void;
  /** Stops it; one that never started releases what it holds (its store). */
  stop(): Promise<void>;
  /** Its progress, where this process can see it (not a worker thread's). */
  readonly isCaughtUp?: boolean;
  readonly position?: Position | null;
  /** Resolves with the error that stopped it for good: an operator must act. */
  readonly failed?: Promise<Error>;
}

export interface ProcessorHostOptions {
  /** Start at the application's bootstrap; else when told (the projector, once it holds its lease). */
  startOnBootstrap: boolean;
  /** The readiness check of each handler whose work this process's requests read, by handler. */
  readiness?: Partial<Record<BackgroundHandler | BackgroundJob, string>>;
  /** The one-off jobs this process runs (BACKGROUND_JOBS places them), by name. */
  jobs?: Partial<Record<BackgroundJob, () => Promise<void>>>;
  logger?: ProcessorLogger;
  /** A unit that ended on its own is started again after this long, doubled per end up to the maximum. */
  restartDelayMs?: number;
  maxRestartDelayMs?: number;
}

/** One entry of the registry: a handler or a job running in this process, as health reads it. */
export interface ProcessorStatus {
  readonly handler: BackgroundHandler | BackgroundJob;
  readonly place: ProcessorPlace;
  /** The readiness check it gates, or null: what it builds serves no request here. */
  readonly readiness: string | null;
  /** Null where this process cannot see its progress (a worker thread). */
  readonly isCaughtUp: boolean | null;
  readonly position: Position | null;
  /** Why it stopped for good, or null. */
  readonly failure: Error | null;
}

interface Entry {
  handler: BackgroundHandler | BackgroundJob;
  place: ProcessorPlace;
  unit: HostedProcessor;
  failure: Error | null;
  /** Runs that ended on their own since it last caught up: the restart's back-off. */
  failedRuns: number;
  restartTimer: NodeJS.Timeout | null;
}

/**
 * The one owner of a process's background work (emmett's processors are the model): the units
 * this process holds, which of them run here (decided once, by processorPlacement), their start,
 * their stop, the restart with back-off of a unit that ends on its own, and the registry that
 * health reads. Every unit is stopped at shutdown, run or not: one that never ran releases its store.
 */
export class ProcessorHost {
  /** Resolves with the first error that stopped a unit running here for good. */
  readonly failed: Promise<Error>;
  private readonly entries: Entry[];
  /** The units held here that the placement runs elsewhere: only stopped, to release what they hold. */
  private readonly idle: HostedProcessor[];
  private readonly logger: ProcessorLogger;
  private readonly restartBackOff: BackOff;
  private started = false;
  private stopped: Promise<void> | null = null;

  constructor(
    config: Pick<ChronicleConfig, 'mongodbUri'>,
    process: ProcessorPlace,
    units: Partial<Record<BackgroundHandler, HostedProcessor>>,
    private readonly options: ProcessorHostOptions,
  ) {
    this.logger = options.logger ?? new Logger('ProcessorHost');
    this.restartBackOff = {
      initialMs: options.restartDelayMs ?? 1_000,
      maxMs: options.maxRestartDelayMs ?? 30_000,
    };
    const held = HOSTED_BY[process];
    const unexpected = Object.keys(units).filter((handler) => !(handler in held));
    if (unexpected.length > 0) throw new Error(`The ${process} process hosts no ${unexpected.join(', ')}`);
    const placement = processorPlacement(config);
    this.entries = (Object.keys(units) as BackgroundHandler[])
      .filter((handler) => placement[handler] === held[handler])
      .map((handler) => ({
        handler,
        place: held[handler]!,
        unit: units[handler]!,
        failure: null,
        failedRuns: 0,
        restartTimer: null,
      }));
    this.idle = Object.values(units).filter((unit) => !this.entries.some((entry) => entry.unit === unit));
    for (const [job, run] of Object.entries(options.jobs ?? {}) as [BackgroundJob, () => Promise<void>][]) {
      if (BACKGROUND_JOBS[job] !== process) throw new Error(`The ${process} process runs no ${job}`);
      const unit = jobUnit(job, run);
      this.entries.push({
        handler: job,
        place: process,
        unit,
        failure: null,
        failedRuns: 0,
        restartTimer: null,
      });
    }
    const failures = this.entries.flatMap((entry) =>
      entry.unit.failed === undefined ? [] : [entry.unit.failed.then((error) => (entry.failure = error))],
    );
    this.failed = Promise.race(failures);
  }

  /** The handlers running in this process. */
  get registry(): ProcessorStatus[] {
    return this.entries.map(({ handler, place, unit, failure }) => ({
      handler,
      place,
      readiness: this.options.readiness?.[handler] ?? null,
      isCaughtUp: unit.isCaughtUp ?? null,
      position: unit.position ?? null,
      failure,
    }));
  }

  onApplicationBootstrap(): void {
    // In the background: background work never delays start-up. Each unit logs its own errors.
    if (this.options.startOnBootstrap) this.start().catch(() => undefined);
  }

  /**
   * Starts every unit placed here. Resolves once each has caught up; rejects with the first
   * that stops first.
   */
  start(): Promise<void> {
    if (this.started) throw new Error('A processor host starts once');
    this.started = true;
    return Promise.all(this.entries.map((entry) => this.startOne(entry))).then(() => undefined);
  }

  onApplicationShutdown(): Promise<void> {
    return this.stop();
  }

  /** Stops every unit, each after the work in hand; safe to call more than once. */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      for (const entry of this.entries) if (entry.restartTimer !== null) clearTimeout(entry.restartTimer);
      await Promise.all(
        [...this.entries.map((entry) => entry.unit), ...this.idle].map((unit) =>
          unit
            .stop()
            .catch((error: unknown) =>
              this.logger.error(`Stopping a processor failed: ${errorMessage(error)}`),
            ),
        ),
      );
    })();
    return this.stopped;
  }

  /** Called at once, not on a later turn: a unit's first step (reading its snapshot) starts now. */
  private startOne(entry: Entry): Promise<void> {
    const started = entry.unit.start((why) => this.restartLater(entry, why));
    return Promise.resolve(started).then(() => {
      entry.failedRuns = 0;
    });
  }

  private restartLater(entry: Entry, why: string): void {
    if (this.stopped !== null) return;
    const delayMs = backOffDelay(++entry.failedRuns, this.restartBackOff);
    this.logger.error(`${why}; starting it again in ${delayMs / 1000} s`);
    entry.restartTimer = setTimeout(() => {
      entry.restartTimer = null;
      if (this.stopped === null) this.startOne(entry).catch(() => undefined);
    }, delayMs);
  }
}

/**
 * Whether readiness has what it waits for of a handler: nothing, as what it builds serves no
 * request here, or its catch-up. Stopping for good is told apart (processorChecks).
 */
export function readinessMet(status: ProcessorStatus): boolean {
  return status.readiness === null || status.isCaughtUp === true;
}

/**
 * A one-off job as a unit: each start runs it once; it has caught up once it has succeeded, and a
 * failure ends it, so that the host starts it again after its back-off. A run is never cut short
 * at stop: the jobs are idempotent, and what a process's end interrupts the next start finishes.
 */
function jobUnit(job: BackgroundJob, run: () => Promise<void>): HostedProcessor {
  const unit = {
    isCaughtUp: false,
    start(ended: (why: string) => void): Promise<void> {
      // Settles only on success, as a worker thread's start does: a failed run is started again.
      return new Promise<void>((resolve) => {
        run().then(
          () => {
            unit.isCaughtUp = true;
            resolve();
          },
          (error: unknown) => ended(`The ${job} job failed: ${errorMessage(error)}`),
        );
      });
    },
    stop: () => Promise.resolve(),
  };
  return unit;
}

/** A readiness check's result, in the shape both processes' health bodies use. */
export type ProcessorCheck =
  { status: 'up' } | { status: 'down'; message: string; position?: string | null; head?: string | null };

/**
 * What readiness says of the handlers in `registry`, as one check each, to run beside the other
 * checks (never after them: a store that hangs must not add its deadline twice). One whose work
 * this process's requests read is down until it has caught up, saying how far it is; one that
 * stopped for good is down, saying why; the others have no check.
 */
export function processorChecks(
  registry: readonly ProcessorStatus[],
  head: () => Promise<Position | null>,
): Record<string, () => Promise<ProcessorCheck>> {
  const checks: Record<string, () => Promise<ProcessorCheck>> = {};
  let headAt: Promise<Position | null> | undefined;
  for (const status of registry) {
    const key = status.readiness ?? status.handler;
    const { failure } = status;
    if (failure !== null) {
      checks[key] = () => Promise.resolve({ status: 'down', message: `stopped: ${failure.message}` });
    } else if (readinessMet(status)) {
      if (status.readiness !== null) checks[key] = () => Promise.resolve({ status: 'up' });
    } else {
      checks[key] = async () => {
        headAt ??= head().catch(() => null);
        const at = await headAt;
        return {
          status: 'down',
          message: 'catching up with the event history',
          position: status.position === null ? null : formatPosition(status.position),
          head: at === null ? null : formatPosition(at),
        };
      };
    }
  }
  return checks;
}
