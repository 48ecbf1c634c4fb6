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
import {
  describeError,
  EventProcessing,
  pause,
  ProcessingStopped,
  ProcessorLogger,
} from './event-processing';

export interface EventConsumerOptions {
  /** Most events handed over per batch. */
  batchSize: number;
  /** The wait before the subscription is reopened after a failed run, doubled per failure. */
  backOff: BackOff;
  /** While catching up, how long the subscription may stay silent before the log says so; 0: never. */
  silenceWarningMs: number;
  logger: ProcessorLogger;
  /** The one stop of the consumer and its processing: aborted by stop(), or when it fails for good. */
  stopping: AbortController;
}

const IDLE = Symbol('idle');

/**
 * The consuming half of a processor (emmett's consumers are the model): follows a catch-up
 * subscription from the handler's stored checkpoint (exclusive), hands what it has at hand to the
 * processing in batches with the checkpoint each reaches, and knows how far it has come. An error
 * of the store or the subscription is logged and the subscription reopened from the stored
 * checkpoint after a back-off; it stops when told to, or when its checkpoint lies beyond the log.
 */
export class EventConsumer {
  private started = false;
  private applied: Position | null = null;
  private caughtUp = false;
  private resolveCaughtUp!: () => void;
  private rejectCaughtUp!: (error: Error) => void;
  private readonly caughtUpSignal = new Promise<void>((resolve, reject) => {
    this.resolveCaughtUp = resolve;
    this.rejectCaughtUp = reject;
  });
  private loop: Promise<void> | null = null;
  private subscription: EventSubscription | null = null;
  /** Runs that failed since the consumer last made progress. */
  private failedRuns = 0;
  private lastCommitAt = 0;
  private resolveFailed!: (error: Error) => void;
  /** Resolves with the error that stopped the consumer for good (an operator must act); never otherwise. */
  readonly failed = new Promise<Error>((resolve) => (this.resolveFailed = resolve));

  constructor(
    private readonly eventStore: EventStore,
    private readonly processing: EventProcessing,
    private readonly options: EventConsumerOptions,
  ) {
    // Marked handled: a caller that never awaits start() must not crash the process on stop().
    this.caughtUpSignal.catch(() => undefined);
  }

  private get name(): string {
    return this.processing.handler.name;
  }
  private get running(): boolean {
    return this.started && !this.options.stopping.signal.aborted;
  }

  /** Position of the last event committed, or null before the first. */
  get position(): Position | null {
    return this.applied;
  }
  /** Whether the history that existed at start has been handled. */
  get isCaughtUp(): boolean {
    return this.caughtUp;
  }

  /** Starts following; resolves once caught up, rejects when stopped first or failed for good. */
  start(): Promise<void> {
    if (this.started || this.options.stopping.signal.aborted)
      throw new Error('An event processor starts once');
    this.started = true;
    this.loop = this.run();
    return this.caughtUpSignal;
  }

  /** Closes the subscription and waits for the batch in hand; safe to call more than once, or before start(). */
  async stop(): Promise<void> {
    this.options.stopping.abort();
    await this.closeSubscription();
    await this.loop;
    if (!this.caughtUp)
      this.rejectCaughtUp(new Error(`The ${this.name} processor stopped before catching up`));
  }

  private async run(): Promise<void> {
    const { logger } = this.options;
    while (this.running) {
      try {
        this.processing.handler.discard?.();
        // Read at every (re)start: a store that lost its data (and its checkpoint) is replayed.
        this.applied = await resumePosition(
          this.eventStore,
          `the ${this.name} processor`,
          await this.processing.handler.loadCheckpoint(),
          (message) => logger.warn(message),
        );
        await this.follow();
        if (this.running)
          logger.warn(`Subscription ended unexpectedly; reopening after ${this.describeApplied()}`);
      } catch (error) {
        if (!this.running || error instanceof ProcessingStopped) break;
        if (error instanceof CheckpointBeyondHeadError || isStoreDamaged(error))
          return this.fail(error as Error);
        const { message, stack } = describeError(error);
        logger.error(
          `Processing failed after ${this.describeApplied()}: ${message}; retrying in ${this.delayMs} ms`,
          stack,
        );
      }
      if (!this.running) break;
      await pause(this.delayMs, this.options.stopping.signal);
      this.failedRuns++;
    }
  }

  /** Stops for good: retrying cannot help, an operator must act. */
  private fail(error: Error): void {
    this.options.logger.error(`The ${this.name} processor stops: ${error.message}`);
    this.options.stopping.abort();
    this.rejectCaughtUp(error);
    this.resolveFailed(error);
  }

  private async follow(): Promise<void> {
    const { eventTypes } = this.processing.handler;
    const subscription = this.eventStore.subscribeToAll({
      ...(this.applied === null ? {} : { after: this.applied }),
      ...(eventTypes === undefined ? {} : { eventTypes }),
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
   * next macrotask), and hands the batch over when it is full, when the subscription has to
   * wait, or at caught-up.
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
      const upTo = gathered;
      unapplied = false;
      deferred = false;
      // Their checkpoint: the batch's last event, or a filter checkpoint beyond it.
      await this.processing.process(batch.splice(0), upTo);
      this.applied = upTo;
      this.lastCommitAt = Date.now();
      this.failedRuns = 0;
    };
    let pending: Promise<IteratorResult<SubscriptionMessage>> | null = null;
    let idle: Promise<typeof IDLE> | null = null;
    while (this.running) {
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
      if (!this.running) return;
      if (result === IDLE) {
        idle = null;
        if (batch.length === 0 && this.idleCommitWaitMs() > 0) deferred = true;
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
      if (batch.length >= this.options.batchSize) {
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
    const { silenceWarningMs } = this.options;
    if (this.caughtUp || silenceWarningMs === 0) return next;
    const since = Date.now();
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const silent = new Promise<typeof IDLE>((resolve) => {
        timer = setTimeout(() => resolve(IDLE), silenceWarningMs);
      });
      const result = await Promise.race([next, silent]);
      clearTimeout(timer);
      if (result !== IDLE || !this.running) return next;
      const store = await this.eventStore.ping().then(
        () => 'it answers a ping',
        (error: unknown) => describeError(error).message,
      );
      this.options.logger.warn(
        `No answer from the event store for ${Math.round((Date.now() - since) / 1000)} s while catching up ` +
          `after ${this.describeApplied()} (${store}); still waiting`,
      );
    }
  }

  /** How long until a batch of no events may be committed. */
  private idleCommitWaitMs(): number {
    const every = this.processing.handler.idleCommitMs ?? 0;
    return Math.max(0, this.lastCommitAt + every - Date.now());
  }

  /** The wait before the subscription is reopened after a failed run. */
  private get delayMs(): number {
    return backOffDelay(this.failedRuns + 1, this.options.backOff);
  }

  private markCaughtUp(): void {
    this.failedRuns = 0;
    if (this.caughtUp) return;
    this.caughtUp = true;
    this.options.logger.log(`Caught up after ${this.describeApplied()}`);
    this.resolveCaughtUp();
  }

  private async closeSubscription(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = null;
    try {
      await subscription?.close();
    } catch (error) {
      this.options.logger.warn(`Closing the subscription failed: ${describeError(error).message}`);
    }
  }

  private describeApplied(): string {
    return this.applied === null ? 'the start' : `position ${formatPosition(this.applied)}`;
  }
}
