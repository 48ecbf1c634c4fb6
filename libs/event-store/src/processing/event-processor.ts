import { Logger } from '@nestjs/common';
import { EventStore } from '../event-store.port';
import { Position } from '../position';
import { CheckpointStore } from './checkpoint-store.port';
import { EventConsumer } from './event-consumer';
import { EventProcessing, ProcessorHandler, ProcessorLogger } from './event-processing';

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

/**
 * The one background processor of the event store (emmett's processors are the model): a
 * consumer (EventConsumer: the subscription from the handler's stored checkpoint, its batches and
 * how far they have been committed) feeding the processing (EventProcessing: the handler, its
 * retries with back-off, and parking, so that a failing event never holds back the others). A
 * replay feeds the same processing from a one-shot read instead (readToEnd).
 */
export class EventProcessor {
  readonly name: string;
  private readonly processing: EventProcessing;
  private readonly consumer: EventConsumer;

  constructor(
    eventStore: EventStore,
    /** What it feeds. */
    readonly handler: ProcessorHandler,
    options: EventProcessorOptions,
  ) {
    this.name = handler.name;
    const batchSize = options.batchSize ?? 1000;
    const maxAttempts = options.maxAttempts ?? 5;
    if (!Number.isInteger(batchSize) || batchSize < 1) {
      throw new RangeError('batchSize must be a positive integer');
    }
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
      throw new RangeError('maxAttempts must be a positive integer');
    }
    const logger = options.logger ?? new Logger(`EventProcessor(${handler.name})`);
    const backOff = { initialMs: options.retryDelayMs ?? 100, maxMs: options.maxRetryDelayMs ?? 10_000 };
    // One stop for both halves: the consumer's stop ends the processing's waits and retries.
    const stopping = new AbortController();
    this.processing = new EventProcessing(handler, options.parking, {
      maxAttempts,
      backOff,
      signal: stopping.signal,
      logger,
    });
    this.consumer = new EventConsumer(eventStore, this.processing, {
      batchSize,
      backOff,
      silenceWarningMs: options.silenceWarningMs ?? 5_000,
      logger,
      stopping,
    });
  }

  /** Position of the last event committed, or null before the first. */
  get position(): Position | null {
    return this.consumer.position;
  }

  /** Whether the history that existed at start has been handled. */
  get isCaughtUp(): boolean {
    return this.consumer.isCaughtUp;
  }

  /** Messages this processor has parked since it started. */
  get parkedSinceStart(): number {
    return this.processing.parked;
  }

  /** Resolves with the error that stopped the processor for good (an operator must act); never otherwise. */
  get failed(): Promise<Error> {
    return this.consumer.failed;
  }

  /**
   * Starts following the event store. Resolves once the history has been handled; keeps
   * retrying (and logging) until then if the stores fail. Rejects when stopped first, or when
   * the checkpoint lies beyond the log.
   */
  start(): Promise<void> {
    return this.consumer.start();
  }

  /** Closes the subscription and waits for the event in hand; safe to call more than once, or before start(). */
  stop(): Promise<void> {
    return this.consumer.stop();
  }
}
