import { traceProjectionBatch } from '@chronicle/tracing';
import { Logger } from '@nestjs/common';
import {
  CheckpointBeyondHeadError,
  comparePositions,
  EventStore,
  EventSubscription,
  formatPosition,
  Position,
  RecordedEvent,
  resumePosition,
  SubscriptionMessage,
} from '@chronicle/event-store';
import { Projection } from './projections/projection';
import { DocumentChange, ReadStore } from './read-store.port';

/** The subset of Nest's LoggerService the runner writes to. */
export interface ProjectionRunnerLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string, stack?: string): void;
}

export interface ProjectionRunnerOptions {
  /** The name the runner's checkpoint is stored under in the read store. */
  checkpointName: string;
  /** Most events applied by one applyBatch call. Default 1000. */
  batchSize?: number;
  logger?: ProjectionRunnerLogger;
  /** Wait before the first retry after an error; doubled per failure up to maxRetryDelayMs. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
}

interface Waiter {
  position: Position;
  resolve(applied: boolean): void;
  timer: NodeJS.Timeout;
}

const IDLE = Symbol('idle');
/** setTimeout fires at once for longer delays. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Feeds projections from one catch-up subscription to all events, from the stored checkpoint
 * (exclusive). Events are applied in batches of what the subscription already has, each batch
 * with its checkpoint, so the read models resume where they stopped. Any error is logged and
 * the subscription reopened from the last applied position after a back-off: the runner only
 * stops when told to.
 */
export class ProjectionRunner {
  private readonly checkpointName: string;
  private readonly batchSize: number;
  private readonly logger: ProjectionRunnerLogger;
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;

  private state: 'new' | 'running' | 'stopped' = 'new';
  private applied: Position | null = null;
  private caughtUp = false;
  private readonly caughtUpSignal: { promise: Promise<void>; resolve(): void; reject(error: Error): void };
  private loop: Promise<void> | null = null;
  private subscription: EventSubscription | null = null;
  private readonly waiters = new Set<Waiter>();
  private delayMs: number;
  private cancelSleep: (() => void) | null = null;

  constructor(
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
    private readonly projections: readonly Projection[],
    options: ProjectionRunnerOptions,
  ) {
    this.checkpointName = options.checkpointName;
    this.batchSize = options.batchSize ?? 1000;
    this.logger = options.logger ?? new Logger(ProjectionRunner.name);
    this.initialDelayMs = options.retryDelayMs ?? 100;
    this.maxDelayMs = options.maxRetryDelayMs ?? 10_000;
    this.delayMs = this.initialDelayMs;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1) {
      throw new RangeError('batchSize must be a positive integer');
    }
    let resolve!: () => void;
    let reject!: (error: Error) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Marked handled: a caller that never awaits start() must not crash the process on stop().
    promise.catch(() => undefined);
    this.caughtUpSignal = { promise, resolve, reject };
  }

  /** Position of the last event applied, or null before the first. */
  get position(): Position | null {
    return this.applied;
  }

  /** Whether the history that existed at start has been applied. */
  get isCaughtUp(): boolean {
    return this.caughtUp;
  }

  /**
   * Starts following the event store. Resolves once the history has been applied; keeps
   * retrying (and logging) until then if the stores fail. Rejects only when stopped first.
   */
  start(): Promise<void> {
    if (this.state !== 'new') throw new Error('A projection runner starts once');
    this.state = 'running';
    this.loop = this.run();
    return this.caughtUpSignal.promise;
  }

  /**
   * Resolves true once the event at `position` has been applied (a response can then read its
   * own write), or false after `timeoutMs` or when the runner stops.
   */
  waitFor(position: Position, timeoutMs: number): Promise<boolean> {
    if (this.applied !== null && comparePositions(this.applied, position) >= 0) return Promise.resolve(true);
    if (this.state === 'stopped' || timeoutMs <= 0) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        position,
        resolve,
        timer: setTimeout(
          () => {
            this.waiters.delete(waiter);
            resolve(false);
          },
          Math.min(timeoutMs, MAX_TIMEOUT_MS),
        ),
      };
      this.waiters.add(waiter);
    });
  }

  /** Closes the subscription and waits for the batch in hand; safe to call more than once. */
  async stop(): Promise<void> {
    if (this.state !== 'running') {
      this.state = 'stopped';
      return;
    }
    this.state = 'stopped';
    this.cancelSleep?.();
    await this.closeSubscription();
    await this.loop;
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(false);
    }
    this.waiters.clear();
    if (!this.caughtUp) {
      this.caughtUpSignal.reject(new Error('The projection runner stopped before catching up'));
    }
  }

  private async run(): Promise<void> {
    let checkpointRead = false;
    while (this.state === 'running') {
      try {
        if (!checkpointRead) {
          this.applied = await resumePosition(
            this.eventStore,
            `the projections (${this.checkpointName})`,
            await this.readStore.getCheckpoint(this.checkpointName),
            (message) => this.logger.warn(message),
          );
          checkpointRead = true;
        }
        await this.follow();
        if (this.state === 'running') {
          this.logger.warn(`Subscription ended unexpectedly; reopening after ${this.describeApplied()}`);
        }
      } catch (error) {
        if (this.state !== 'running') break;
        if (error instanceof CheckpointBeyondHeadError) return this.fail(error);
        const { message, stack } = describeError(error);
        this.logger.error(
          `Projection failed after ${this.describeApplied()}: ${message}; retrying in ${this.delayMs} ms`,
          stack,
        );
      }
      if (this.state !== 'running') break;
      await this.sleep(this.delayMs);
      this.delayMs = Math.min(this.delayMs * 2, this.maxDelayMs);
    }
  }

  /** Stops for good: retrying cannot help, an operator must act. */
  private fail(error: Error): void {
    this.logger.error(error.message);
    this.state = 'stopped';
    this.caughtUpSignal.reject(error);
  }

  private async follow(): Promise<void> {
    const subscription = this.eventStore.subscribeToAll(this.applied === null ? {} : { after: this.applied });
    this.subscription = subscription;
    try {
      // stop() may have run while the subscription was being opened.
      if (this.state === 'running') await this.consume(subscription);
    } finally {
      await this.closeSubscription();
    }
  }

  /**
   * Gathers events into a batch while the subscription has more at hand (they arrive before the
   * next macrotask), and applies the batch when it is full, when the subscription has to wait,
   * or at caught-up.
   */
  private async consume(subscription: EventSubscription): Promise<void> {
    const iterator = subscription[Symbol.asyncIterator]();
    const batch: RecordedEvent[] = [];
    /** The last position taken in: an event of the batch, or a checkpoint the filter reached after it. */
    let gathered = this.applied;
    /** Whether `gathered` is beyond what has been applied. */
    let unapplied = false;
    /** The last event taken in; the subscription starts after the checkpoint, so none is older. */
    let lastEvent = this.applied;
    const applyBatch = async () => {
      if (!unapplied || gathered === null) return;
      unapplied = false;
      const events = batch.splice(0);
      await traceProjectionBatch(this.checkpointName, events.length, () => this.apply(events, gathered!));
    };
    let pending: Promise<IteratorResult<SubscriptionMessage>> | null = null;
    let idle: Promise<typeof IDLE> | null = null;
    try {
      while (this.state === 'running') {
        pending ??= iterator.next();
        let result: IteratorResult<SubscriptionMessage> | typeof IDLE;
        if (!unapplied) {
          result = await pending;
        } else {
          idle ??= new Promise((resolve) => setImmediate(() => resolve(IDLE)));
          result = await Promise.race([pending, idle]);
        }
        if (this.state !== 'running') return;
        if (result === IDLE) {
          idle = null;
          await applyBatch();
          continue;
        }
        pending = null;
        if (result.done) {
          await applyBatch();
          return;
        }
        const message = result.value;
        if (message.kind === 'caught-up') {
          idle = null;
          await applyBatch();
          this.markCaughtUp();
          continue;
        }
        const position = message.kind === 'event' ? message.event.position : message.position;
        if (message.kind === 'event') {
          // Only an event makes a later one a repeat: a checkpoint, which servers have sent
          // wrong, never suppresses an event.
          if (lastEvent !== null && comparePositions(position, lastEvent) <= 0) continue;
          lastEvent = position;
          batch.push(message.event);
        } else if (gathered !== null && comparePositions(position, gathered) <= 0) {
          continue;
        }
        // The batch's checkpoint never goes backwards.
        if (gathered === null || comparePositions(position, gathered) > 0) gathered = position;
        unapplied = true;
        if (batch.length >= this.batchSize) {
          idle = null;
          await applyBatch();
        }
      }
    } finally {
      // Left pending when the loop ends early; its outcome no longer matters.
      pending?.catch(() => undefined);
    }
  }

  /** Projects `events` and checkpoints at `upTo`: their last, or a filter checkpoint beyond it. */
  private async apply(events: RecordedEvent[], upTo: Position): Promise<void> {
    const changes: DocumentChange[] = [];
    for (const event of events) {
      for (const projection of this.projections) changes.push(...this.project(projection, event));
    }
    const checkpoint = upTo;
    await this.readStore.applyBatch(changes, { projection: this.checkpointName, position: checkpoint });
    this.applied = checkpoint;
    this.delayMs = this.initialDelayMs;
    this.releaseWaiters(checkpoint);
  }

  private project(projection: Projection, event: RecordedEvent): DocumentChange[] {
    try {
      return projection.project(event);
    } catch (error) {
      throw new Error(
        `Projection ${projection.name} failed on ${event.type} at ${formatPosition(event.position)} in ${event.stream}: ${describeError(error).message}`,
        { cause: error },
      );
    }
  }

  private markCaughtUp(): void {
    this.delayMs = this.initialDelayMs;
    if (this.caughtUp) return;
    this.caughtUp = true;
    this.logger.log(`Caught up after ${this.describeApplied()}`);
    this.caughtUpSignal.resolve();
  }

  private releaseWaiters(applied: Position): void {
    for (const waiter of this.waiters) {
      if (comparePositions(applied, waiter.position) >= 0) {
        clearTimeout(waiter.timer);
        this.waiters.delete(waiter);
        waiter.resolve(true);
      }
    }
  }

  private async closeSubscription(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = null;
    try {
      await subscription?.close();
    } catch (error) {
      this.logger.warn(`Closing the subscription failed: ${describeError(error).message}`);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.cancelSleep = null;
        resolve();
      }, ms);
      this.cancelSleep = () => {
        clearTimeout(timer);
        this.cancelSleep = null;
        resolve();
      };
    });
  }

  private describeApplied(): string {
    return this.applied === null ? 'the start' : `position ${formatPosition(this.applied)}`;
  }
}

function describeError(error: unknown): { message: string; stack?: string } {
  return error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) };
}
