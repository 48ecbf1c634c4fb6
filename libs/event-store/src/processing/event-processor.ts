import { Logger } from '@nestjs/common';
import { BackOff, backOffDelay } from '@chronicle/config';
import { resumePosition } from '../checkpoints';
import {
  CheckpointBeyondHeadError,
  EventStore,
  EventSubscription,
  RecordedEvent,
  SubscriptionMessage,
} from '../event-store.port';
import { comparePositions, formatPosition, Position } from '../position';
import { isStoreDamaged } from '../store-unavailable';
import { CheckpointStore, ParkedMessage } from './checkpoint-store.port';

/** Thrown by a handler when retrying cannot help (an SMTP 5xx, a decision that refuses): the message is parked at once. */
export class PermanentFailure extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentFailure';
  }
}

/** The record of `event` parked by `processor`: the processors' and a replay's, alike. */
export function parkedMessage(
  processor: string,
  event: RecordedEvent,
  reason: string,
  attempts: number,
): ParkedMessage {
  return {
    processor,
    eventId: event.id,
    stream: event.stream,
    revision: event.revision,
    type: event.type,
    position: event.position,
    reason,
    attempts,
    parkedAt: new Date().toISOString(),
  };
}

/**
 * Thrown by a handler's commit when its store no longer holds what the checkpoint covers (a read
 * store wiped or replaced under it): the batch is dropped and the processor starts over from the
 * checkpoint it reads again, instead of writing its position into the empty store.
 */
export class StoreReplacedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreReplacedError';
  }
}

/**
 * What a processor feeds. Events are handled one by one, in log order; `commit` then makes the
 * batch's effects and its checkpoint durable, together where the store allows it, else the
 * checkpoint after the effects (handlers are idempotent, so a replayed event does nothing twice).
 */
export interface ProcessorHandler {
  /** The checkpoint's name, and the processor's in logs and parked messages. */
  readonly name: string;
  /** Only these event types are fed (the store filters them); absent: every event. */
  readonly eventTypes?: readonly string[];
  /**
   * How often a batch with no events (a filtered subscription moving past other events) is
   * committed: 0 for every one, else at most once per this many ms. Default 0.
   */
  readonly idleCommitMs?: number;
  /** The stored checkpoint, read again at every (re)start, so a store that lost it is noticed. */
  loadCheckpoint(): Promise<Position | null>;
  /** Handles one event. A throw is retried with back-off; a PermanentFailure parks the event. */
  handle(event: RecordedEvent): Promise<void> | void;
  /** Stores the effects of the events handled since the last commit, and `upTo` as checkpoint. */
  commit(upTo: Position): Promise<void>;
  /** Forgets effects handled but not committed: the processor is about to read from the checkpoint again. */
  discard?(): void;
}

/** The subset of Nest's LoggerService the processor writes to. */
export interface ProcessorLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string, stack?: string): void;
}

export interface EventProcessorOptions {
  /** Where messages that fail for good are kept, with their reason. */
  parking: CheckpointStore;
  /** Most events handled per commit. Default 1000. */
  batchSize?: number;
  /** Attempts at one message before it is parked. Default 5. */
  maxAttempts?: number;
  logger?: ProcessorLogger;
  /** Wait before the first retry after an error; doubled per failure up to maxRetryDelayMs. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /**
   * While catching up, how long the subscription may stay silent before the log says so, with
   * what a ping of the store answers, and again every such period. Default 5 s; 0: never.
   */
  silenceWarningMs?: number;
}

interface Waiter {
  position: Position;
  resolve(applied: boolean): void;
  timer: NodeJS.Timeout;
}

const IDLE = Symbol('idle');
/** setTimeout fires at once for longer delays. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Ends a batch in hand when the processor stops. */
class Stopped extends Error {}

/**
 * The one background consumer of the event store (emmett's processors are the model): follows a
 * catch-up subscription from the handler's stored checkpoint (exclusive), gathers what the
 * subscription has at hand into batches, hands each event to the handler, and commits the batch
 * with its checkpoint. A failing event is retried with back-off, counted per event, and parked
 * with its reason once it fails for good or too often, so it never holds back the others. Any
 * other error (the store, the subscription) is logged as it happens and the subscription reopened
 * from the stored checkpoint after a back-off: the processor only stops when told to, or when its
 * checkpoint lies beyond the log (an operator must act).
 */
export class EventProcessor {
  readonly name: string;
  private readonly batchSize: number;
  private readonly maxAttempts: number;
  private readonly logger: ProcessorLogger;
  private readonly backOff: BackOff;
  private readonly silenceWarningMs: number;
  private readonly parking: CheckpointStore;

  private state: 'new' | 'running' | 'stopped' = 'new';
  private applied: Position | null = null;
  private caughtUp = false;
  private readonly caughtUpSignal: { promise: Promise<void>; resolve(): void; reject(error: Error): void };
  private loop: Promise<void> | null = null;
  private subscription: EventSubscription | null = null;
  private readonly waiters = new Set<Waiter>();
  /** Runs that failed since the processor last made progress. */
  private failedRuns = 0;
  private cancelSleep: (() => void) | null = null;
  private lastCommitAt = 0;
  private parkedCount = 0;
  private resolveFailed!: (error: Error) => void;
  /** Resolves with the error that stopped the processor for good (an operator must act); never otherwise. */
  readonly failed = new Promise<Error>((resolve) => (this.resolveFailed = resolve));

  constructor(
    private readonly eventStore: EventStore,
    private readonly handler: ProcessorHandler,
    options: EventProcessorOptions,
  ) {
    this.name = handler.name;
    this.parking = options.parking;
    this.batchSize = options.batchSize ?? 1000;
    this.maxAttempts = options.maxAttempts ?? 5;
    this.logger = options.logger ?? new Logger(`EventProcessor(${handler.name})`);
    this.backOff = { initialMs: options.retryDelayMs ?? 100, maxMs: options.maxRetryDelayMs ?? 10_000 };
    this.silenceWarningMs = options.silenceWarningMs ?? 5_000;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1) {
      throw new RangeError('batchSize must be a positive integer');
    }
    if (!Number.isInteger(this.maxAttempts) || this.maxAttempts < 1) {
      throw new RangeError('maxAttempts must be a positive integer');
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

  /** Position of the last event committed, or null before the first. */
  get position(): Position | null {
    return this.applied;
  }

  /** Whether the history that existed at start has been handled. */
  get isCaughtUp(): boolean {
    return this.caughtUp;
  }

  /** Messages this processor has parked since it started. */
  get parkedSinceStart(): number {
    return this.parkedCount;
  }

  /**
   * Starts following the event store. Resolves once the history has been handled; keeps
   * retrying (and logging) until then if the stores fail. Rejects when stopped first, or when
   * the checkpoint lies beyond the log.
   */
  start(): Promise<void> {
    if (this.state !== 'new') throw new Error('An event processor starts once');
    this.state = 'running';
    this.loop = this.run();
    return this.caughtUpSignal.promise;
  }

  /**
   * Resolves true once the event at `position` has been committed (a response can then read its
   * own write), or false after `timeoutMs` or when the processor stops.
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

  /**
   * Closes the subscription and waits for the event in hand; safe to call more than once, or
   * before start(). Who waits for a position is answered false.
   */
  async stop(): Promise<void> {
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
      this.caughtUpSignal.reject(new Error(`The ${this.name} processor stopped before catching up`));
    }
  }

  private async run(): Promise<void> {
    while (this.state === 'running') {
      try {
        this.handler.discard?.();
        // Read at every (re)start: a store that lost its data (and its checkpoint) is replayed.
        this.applied = await resumePosition(
          this.eventStore,
          `the ${this.name} processor`,
          await this.handler.loadCheckpoint(),
          (message) => this.logger.warn(message),
        );
        await this.follow();
        if (this.state === 'running') {
          this.logger.warn(`Subscription ended unexpectedly; reopening after ${this.describeApplied()}`);
        }
      } catch (error) {
        if (this.state !== 'running' || error instanceof Stopped) break;
        if (error instanceof CheckpointBeyondHeadError || isStoreDamaged(error))
          return this.fail(error as Error);
        const { message, stack } = describeError(error);
        this.logger.error(
          `Processing failed after ${this.describeApplied()}: ${message}; retrying in ${this.delayMs} ms`,
          stack,
        );
      }
      if (this.state !== 'running') break;
      await this.sleep(this.delayMs);
      this.failedRuns++;
    }
  }

  /** Stops for good: retrying cannot help, an operator must act. */
  private fail(error: Error): void {
    this.logger.error(`The ${this.name} processor stops: ${error.message}`);
    this.state = 'stopped';
    this.caughtUpSignal.reject(error);
    this.resolveFailed(error);
  }

  private async follow(): Promise<void> {
    const subscription = this.eventStore.subscribeToAll({
      ...(this.applied === null ? {} : { after: this.applied }),
      ...(this.handler.eventTypes === undefined ? {} : { eventTypes: this.handler.eventTypes }),
    });
    this.subscription = subscription;
    try {
      await this.consume(subscription);
    } finally {
      await this.closeSubscription();
    }
  }

  /**
   * Gathers events into a batch while the subscription has more at hand (they arrive before the
   * next macrotask), and handles the batch when it is full, when the subscription has to wait,
   * or at caught-up.
   */
  private async consume(subscription: EventSubscription): Promise<void> {
    const iterator = subscription[Symbol.asyncIterator]();
    const batch: RecordedEvent[] = [];
    /** The last position taken in: an event of the batch, or a checkpoint the filter reached after it. */
    let gathered = this.applied;
    /** Whether `gathered` is beyond what has been committed. */
    let unapplied = false;
    /** The last event taken in; the subscription starts after the checkpoint, so none is older. */
    let lastEvent = this.applied;
    /** A batch of no events whose commit is not yet due: it waits for the next message. */
    let deferred = false;
    const applyBatch = async () => {
      if (!unapplied || gathered === null) return;
      unapplied = false;
      deferred = false;
      await this.apply(batch.splice(0), gathered);
    };
    let pending: Promise<IteratorResult<SubscriptionMessage>> | null = null;
    let idle: Promise<typeof IDLE> | null = null;
    while (this.state === 'running') {
      // Awaited or raced at once: a read left pending when the loop ends early fails handled.
      pending ??= iterator.next();
      let result: IteratorResult<SubscriptionMessage> | typeof IDLE;
      if (!unapplied) {
        result = await this.untilAnswered(pending);
      } else {
        // A deferred commit waits until it is due (or for the next message), else for the next turn.
        idle ??= deferred
          ? new Promise((resolve) => setTimeout(() => resolve(IDLE), this.idleCommitWaitMs()).unref())
          : new Promise((resolve) => setImmediate(() => resolve(IDLE)));
        result = await Promise.race([pending, idle]);
      }
      if (this.state !== 'running') return;
      if (result === IDLE) {
        idle = null;
        if (batch.length === 0 && !this.idleCommitDue()) deferred = true;
        else await applyBatch();
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
        if (deferred) idle = null;
      } else if (gathered !== null && comparePositions(position, gathered) <= 0) {
        continue;
      }
      // The batch's checkpoint never goes backwards.
      if (gathered === null || comparePositions(position, gathered) > 0) gathered = position;
      unapplied = true;
      if (batch.length > 0) deferred = false;
      if (batch.length >= this.batchSize) {
        idle = null;
        await applyBatch();
      }
    }
  }

  /**
   * The subscription's next message. Before catching up, silence is not idleness: a store that
   * does not answer (unreachable, hung) would otherwise leave the log empty while nothing moves,
   * so every `silenceWarningMs` it says so, naming what a ping of the store answers.
   */
  private async untilAnswered<T>(next: Promise<T>): Promise<T> {
    if (this.caughtUp || this.silenceWarningMs === 0) return next;
    const since = Date.now();
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const silent = new Promise<typeof IDLE>((resolve) => {
        timer = setTimeout(() => resolve(IDLE), this.silenceWarningMs);
      });
      const result = await Promise.race([next, silent]);
      clearTimeout(timer);
      if (result !== IDLE || this.state !== 'running') return next;
      const store = await this.eventStore.ping().then(
        () => 'it answers a ping',
        (error: unknown) => describeError(error).message,
      );
      this.logger.warn(
        `No answer from the event store for ${Math.round((Date.now() - since) / 1000)} s while catching up ` +
          `after ${this.describeApplied()} (${store}); still waiting`,
      );
    }
  }

  private idleCommitDue(): boolean {
    return this.idleCommitWaitMs() === 0;
  }

  /** How long until a batch of no events may be committed. */
  private idleCommitWaitMs(): number {
    const every = this.handler.idleCommitMs ?? 0;
    return Math.max(0, this.lastCommitAt + every - Date.now());
  }

  /** Handles `events` one by one, then commits at `upTo`: their last, or a filter checkpoint beyond it. */
  private async apply(events: RecordedEvent[], upTo: Position): Promise<void> {
    for (const event of events) await this.handleOne(event);
    await this.untilDone(() => this.handler.commit(upTo), `Committing at ${formatPosition(upTo)}`);
    this.applied = upTo;
    this.lastCommitAt = Date.now();
    this.failedRuns = 0;
    this.releaseWaiters(upTo);
  }

  /** Retries the event with back-off; parks it once it fails for good or `maxAttempts` times. */
  private async handleOne(event: RecordedEvent): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.handler.handle(event);
        return;
      } catch (error) {
        if (this.state !== 'running') throw new Stopped();
        const permanent = error instanceof PermanentFailure;
        const { message, stack } = describeError(error);
        const what = `${event.type} ${event.id} at ${formatPosition(event.position)} in ${event.stream}`;
        if (permanent || attempt >= this.maxAttempts) {
          this.logger.error(
            `Parking ${what} after ${attempt} attempt(s): ${message}. ` +
              'The others go on; `projections status` lists it, `projections parked` retries or drops it.',
            stack,
          );
          await this.untilDone(
            () => this.parking.park(parkedMessage(this.name, event, message, attempt)),
            `Parking ${what}`,
          );
          this.parkedCount++;
          return;
        }
        const delay = backOffDelay(attempt, this.backOff);
        this.logger.warn(`Handling ${what} failed (attempt ${attempt}): ${message}; retrying in ${delay} ms`);
        await this.sleep(delay);
        if (this.state !== 'running') throw new Stopped();
      }
    }
  }

  /** Store writes are retried until they succeed (an outage is not the message's fault) or the processor stops. */
  private async untilDone(work: () => Promise<void>, what: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await work();
        return;
      } catch (error) {
        if (this.state !== 'running') throw new Stopped();
        if (error instanceof StoreReplacedError) throw error;
        const { message, stack } = describeError(error);
        const delay = backOffDelay(attempt, this.backOff);
        this.logger.error(`${what} failed: ${message}; retrying in ${delay} ms`, stack);
        await this.sleep(delay);
        if (this.state !== 'running') throw new Stopped();
      }
    }
  }

  /** The wait before the subscription is reopened after a failed run. */
  private get delayMs(): number {
    return backOffDelay(this.failedRuns + 1, this.backOff);
  }

  private markCaughtUp(): void {
    this.failedRuns = 0;
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
