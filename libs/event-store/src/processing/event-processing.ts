import { BackOff, backOffDelay } from '@chronicle/config';
import { RecordedEvent } from '../event-store.port';
import { formatPosition, Position } from '../position';
import { CheckpointStore, ParkedMessage } from './checkpoint-store.port';

/** Thrown by a handler when retrying cannot help (an SMTP 5xx, a decision that refuses): the message is parked at once. */
export class PermanentFailure extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentFailure';
  }
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

/** Ends the batch in hand when its processor stops. */
export class ProcessingStopped extends Error {}

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

/** Where parked messages go: the checkpoint store, or a replay's tally in front of it. */
export type Parking = Pick<CheckpointStore, 'park'>;

/** How work that runs until stopped (a processor) outlasts failures. */
export interface RetryPolicy {
  /** Attempts at one event before it is parked. */
  maxAttempts: number;
  /** The waits between attempts, at an event and at a store write alike. */
  backOff: BackOff;
  /** Ends every wait, and every retry, once aborted: the processor stops. */
  signal: AbortSignal;
  logger: ProcessorLogger;
}

/**
 * The processing half of a processor (the consumer is the other): hands each event of a batch to
 * the handler, parks what fails for good with its reason, then commits the batch with its
 * checkpoint. With a retry policy (a processor) an event that fails is retried with back-off and
 * parked after too many attempts, and a store write is retried until it succeeds; without one (a
 * replay, which runs once and reports) only a PermanentFailure parks, and any other failure ends
 * the run. A handler that answers synchronously is never awaited: a replay's loop stays tight.
 */
export class EventProcessing {
  private parkedCount = 0;

  constructor(
    readonly handler: ProcessorHandler,
    private readonly parking: Parking,
    private readonly retry: RetryPolicy | null = null,
  ) {}

  /** Messages parked so far. */
  get parked(): number {
    return this.parkedCount;
  }

  /** Handles `events` one by one, then commits at `upTo`: their last, or a checkpoint the read reached beyond it. */
  async process(events: readonly RecordedEvent[], upTo: Position): Promise<void> {
    const handler = this.handler;
    for (const event of events) {
      try {
        const handling = handler.handle(event);
        if (handling !== undefined) await handling;
      } catch (error) {
        await this.recover(event, error);
      }
    }
    await this.write(() => handler.commit(upTo), `Committing at ${formatPosition(upTo)}`);
  }

  /** After a failed attempt at `event`: retries it with back-off, or parks it once it fails for good or too often. */
  private async recover(event: RecordedEvent, failure: unknown): Promise<void> {
    const retry = this.retry;
    for (let attempt = 1; ; attempt++) {
      if (retry?.signal.aborted) throw new ProcessingStopped();
      const permanent = failure instanceof PermanentFailure;
      if (retry === null && !permanent) throw failure;
      const { message, stack } = describeError(failure);
      const what = `${event.type} ${event.id} at ${formatPosition(event.position)} in ${event.stream}`;
      if (retry === null || permanent || attempt >= retry.maxAttempts) {
        retry?.logger.error(
          `Parking ${what} after ${attempt} attempt(s): ${message}. ` +
            'The others go on; `projections status` lists it, `projections parked` retries or drops it.',
          stack,
        );
        await this.write(
          () => this.parking.park(parkedMessage(this.handler.name, event, message, attempt)),
          `Parking ${what}`,
        );
        this.parkedCount++;
        return;
      }
      const delay = backOffDelay(attempt, retry.backOff);
      retry.logger.warn(`Handling ${what} failed (attempt ${attempt}): ${message}; retrying in ${delay} ms`);
      await pause(delay, retry.signal);
      if (retry.signal.aborted) throw new ProcessingStopped();
      try {
        await this.handler.handle(event);
        return;
      } catch (error) {
        failure = error;
      }
    }
  }

  /** Store writes are retried until they succeed (an outage is not the message's fault) or the processor stops. */
  private async write(work: () => Promise<void>, what: string): Promise<void> {
    const retry = this.retry;
    if (retry === null) return work();
    for (let attempt = 1; ; attempt++) {
      try {
        await work();
        return;
      } catch (error) {
        if (retry.signal.aborted) throw new ProcessingStopped();
        if (error instanceof StoreReplacedError) throw error;
        const { message, stack } = describeError(error);
        const delay = backOffDelay(attempt, retry.backOff);
        retry.logger.error(`${what} failed: ${message}; retrying in ${delay} ms`, stack);
        await pause(delay, retry.signal);
        if (retry.signal.aborted) throw new ProcessingStopped();
      }
    }
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

export function describeError(error: unknown): { message: string; stack?: string } {
  return error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) };
}
