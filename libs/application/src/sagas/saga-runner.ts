import { Logger } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import {
  CheckpointBeyondHeadError,
  EventStore,
  EventSubscription,
  formatPosition,
  Position,
  resumePosition,
} from '@chronicle/event-store';
import { ReadStore } from '@chronicle/read-models';
import { traceSagaStep } from '@chronicle/tracing';
import { Saga } from './password.saga';

export interface SagaRunnerOptions {
  /** First retry delay; doubles up to maxRetryDelayMs. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /** Events without work between two checkpoint writes. */
  checkpointEvery?: number;
  /** After events without work, the checkpoint is written once the stream has been quiet this long. */
  saveDelayMs?: number;
}

/**
 * Feeds a saga from a durable catch-up subscription with its own checkpoint, instead of the
 * in-process event bus: an event appended just before the process died is still handled after a
 * restart. Each command is awaited and retried with back-off until it succeeds, and the
 * checkpoint only moves past handled events; an error is logged and never ends the stream (the
 * known failure of an RxJS @Saga, which dies on its first error). Commands are idempotent, so an
 * event handled again after a crash does nothing twice.
 */
export class SagaRunner {
  private readonly logger: Logger;
  private readonly retryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly checkpointEvery: number;
  private readonly saveDelayMs: number;
  private subscription: EventSubscription | null = null;
  private loop: Promise<void> | null = null;
  private stopped = false;
  private wake: (() => void) | null = null;
  private lastSeen: Position | null = null;
  private saveTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly saga: Saga,
    private readonly store: EventStore,
    private readonly checkpoints: ReadStore,
    private readonly commands: CommandBus,
    options: SagaRunnerOptions = {},
  ) {
    this.logger = new Logger(`SagaRunner(${saga.name})`);
    this.retryDelayMs = options.retryDelayMs ?? 250;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.checkpointEvery = options.checkpointEvery ?? 1_000;
    this.saveDelayMs = options.saveDelayMs ?? 200;
  }

  /** Starts in the background: a saga never delays start-up. */
  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.wake?.();
    await this.subscription?.close();
    await this.loop;
  }

  private async run(): Promise<void> {
    let delay = this.retryDelayMs;
    while (!this.stopped) {
      try {
        this.lastSeen ??= await resumePosition(
          this.store,
          `the ${this.saga.name} saga`,
          await this.checkpoints.getCheckpoint(this.saga.name),
          (message) => this.logger.warn(message),
        );
        const after = this.lastSeen ?? undefined;
        this.subscription = this.store.subscribeToAll({ after, eventTypes: this.saga.eventTypes });
        let unsaved = 0;
        for await (const message of this.subscription) {
          if (message.kind === 'caught-up') {
            if (unsaved > 0) await this.saveCheckpoint();
            unsaved = 0;
            continue;
          }
          const event = message.kind === 'event' ? message.event : null;
          const command = event && this.saga.commandFor(event);
          if (event && command)
            await traceSagaStep(this.saga.name, event, () => this.handle(command, event.id, event.type));
          if (this.stopped) return;
          // A checkpoint message: the events up to it were not the saga's, nothing to do for them.
          this.lastSeen = message.kind === 'event' ? message.event.position : message.position;
          if (command || ++unsaved >= this.checkpointEvery) {
            await this.saveCheckpoint();
            unsaved = 0;
          } else {
            this.scheduleSave();
          }
          delay = this.retryDelayMs;
        }
      } catch (error) {
        if (this.stopped) return;
        if (error instanceof CheckpointBeyondHeadError) {
          // Retrying cannot help: an operator must act, and the message says how.
          this.logger.error(error.message);
          return;
        }
        this.logger.error(
          { err: error },
          'Saga subscription failed; resubscribing from the last handled event',
        );
        await this.sleep(delay);
        delay = Math.min(delay * 2, this.maxRetryDelayMs);
      }
    }
  }

  /** Retries until the command succeeds or the runner stops. */
  private async handle(command: object, eventId: string, eventType: string): Promise<void> {
    let delay = this.retryDelayMs;
    for (let attempt = 1; !this.stopped; attempt++) {
      try {
        await this.commands.execute(command);
        return;
      } catch (error) {
        this.logger.warn(
          {
            err: { message: error instanceof Error ? error.message : String(error) },
            eventId,
            eventType,
            attempt,
            delay,
          },
          'Saga step failed; retrying',
        );
        await this.sleep(delay);
        delay = Math.min(delay * 2, this.maxRetryDelayMs);
      }
    }
  }

  /** Live events without work still move the checkpoint, in one write per quiet spell. */
  private scheduleSave(): void {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      this.saveCheckpoint().catch((error: unknown) =>
        this.logger.warn({ err: error }, 'Checkpoint write failed'),
      );
    }, this.saveDelayMs);
  }

  private async saveCheckpoint(): Promise<void> {
    if (!this.lastSeen) return;
    await this.checkpoints.applyBatch([], { projection: this.saga.name, position: this.lastSeen });
    this.logger.debug(`Checkpoint ${formatPosition(this.lastSeen)}`);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
