import {
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type EventStoreDBClient,
  eventTypeFilter,
  excludeSystemEvents,
  START,
} from '@eventstore/db-client';
import type { EventSubscription, SubscriptionMessage } from '../event-store.port';
import { comparePositions, type Position } from '../position';
import { fromResolvedEvent, isSystemEvent, positionOf } from './esdb-events';

export interface ResubscribeOptions {
  /** Wait before the first resubscription after a drop; doubled per failed attempt. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** Told of every drop before the wait, e.g. to log it. */
  onDropped?: (error: Error, attempt: number, delayMs: number) => void;
}

/** Messages buffered ahead of the consumer before the server stream is paused. */
const HIGH_WATER_MARK = 256;

/** Exponential back-off with jitter, so many subscribers do not reconnect in lock-step. */
export function retryDelay(
  attempt: number,
  options: Pick<ResubscribeOptions, 'initialDelayMs' | 'maxDelayMs'>,
): number {
  const ceiling = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

class SubscriptionEnded extends Error {
  constructor() {
    super('The server ended the subscription');
    this.name = 'SubscriptionEnded';
  }
}

/**
 * A catch-up subscription to `$all` that survives drops: whenever the server stream fails or ends
 * it subscribes again, after a back-off, from the last position it took in. Subscriptions exclude
 * their start position, so nothing is delivered twice and nothing is skipped.
 */
export class EsdbSubscription implements EventSubscription {
  private readonly queue: SubscriptionMessage[] = [];
  private wakeConsumer: (() => void) | null = null;
  private last: Position | undefined;
  private caughtUp = false;
  private closed = false;
  /** A fault the consumer must see: an event that cannot be read as ours. */
  private fault: Error | null = null;
  private current: AllStreamSubscription | null = null;
  private stopCurrent: (() => void) | null = null;
  private cancelWait: (() => void) | null = null;
  private readonly running: Promise<void>;

  constructor(
    private readonly client: EventStoreDBClient,
    after: Position | undefined,
    private readonly options: ResubscribeOptions,
    private readonly onClosed: (subscription: EsdbSubscription) => void,
    /** Only events of these types, filtered by the server; null for every non-system event. */
    private readonly eventTypes: readonly string[] | null = null,
  ) {
    this.last = after;
    this.running = this.run();
  }

  [Symbol.asyncIterator](): AsyncIterator<SubscriptionMessage> {
    return {
      next: () => this.next(),
      return: async () => {
        await this.close();
        return { value: undefined, done: true };
      },
    };
  }

  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.queue.length = 0;
      this.stopCurrent?.();
      this.cancelWait?.();
      this.wake();
      this.onClosed(this);
    }
    await this.running;
  }

  private async next(): Promise<IteratorResult<SubscriptionMessage>> {
    for (;;) {
      const message = this.queue.shift();
      if (message) {
        if (this.queue.length < HIGH_WATER_MARK / 2 && this.current?.isPaused()) this.current.resume();
        return { value: message, done: false };
      }
      if (this.fault) {
        const fault = this.fault;
        await this.close();
        throw fault;
      }
      if (this.closed) return { value: undefined, done: true };
      await new Promise<void>((resolve) => (this.wakeConsumer = resolve));
    }
  }

  private wake(): void {
    const wake = this.wakeConsumer;
    this.wakeConsumer = null;
    wake?.();
  }

  private async run(): Promise<void> {
    let attempt = 0;
    while (!this.closed && !this.fault) {
      const error = await this.follow(() => (attempt = 0));
      if (this.closed || this.fault) return;
      attempt++;
      const delayMs = retryDelay(attempt, this.options);
      this.options.onDropped?.(error, attempt, delayMs);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delayMs);
        this.cancelWait = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.cancelWait = null;
    }
  }

  /**
   * Follows one server subscription until it fails or ends; resolves with why.
   * `progressed` is called once it delivers something, to reset the back-off.
   */
  private follow(progressed: () => void): Promise<Error> {
    return new Promise<Error>((resolve) => {
      const subscription = this.client.subscribeToAll({
        fromPosition: this.last ?? START,
        filter:
          this.eventTypes === null
            ? excludeSystemEvents()
            : eventTypeFilter({
                regex: exactly(this.eventTypes),
                // The server reports how far its filter has scanned, every search window.
                checkpointInterval: 1,
                checkpointReached: (_subscription, reached) => this.takeCheckpoint(reached),
              }),
      });
      this.current = subscription;
      let received = 0;
      // The client announces caught-up out of band, possibly while events that precede it are
      // still buffered in the stream: it belongs after the `caughtUpAfter`-th event received.
      let caughtUpAfter: number | null = null;

      const onData = (resolved: AllStreamResolvedEvent) => {
        received++;
        progressed();
        this.take(resolved);
        if (caughtUpAfter === received) this.markCaughtUp();
        if (this.queue.length >= HIGH_WATER_MARK) subscription.pause();
      };
      const onCaughtUp = () => {
        progressed();
        const buffered = subscription.readableLength;
        if (buffered === 0) this.markCaughtUp();
        else caughtUpAfter = received + buffered;
      };
      const finish = (error: Error) => {
        subscription.off('data', onData);
        subscription.off('caughtUp', onCaughtUp);
        subscription.off('error', finish);
        subscription.off('end', onEnd);
        // Late errors from the abandoned stream must not surface as unhandled.
        subscription.on('error', () => undefined);
        // Fails only if the call never started; then there is nothing to cancel.
        subscription.unsubscribe().catch(() => undefined);
        this.current = null;
        this.stopCurrent = null;
        resolve(error);
      };
      const onEnd = () => finish(new SubscriptionEnded());

      subscription.on('data', onData);
      subscription.on('caughtUp', onCaughtUp);
      subscription.on('error', finish);
      subscription.on('end', onEnd);
      this.stopCurrent = () => finish(new Error('closed'));
    });
  }

  private takeCheckpoint(reached: { commit: bigint; prepare: bigint }): void {
    if (this.closed || this.fault) return;
    const position = { commit: reached.commit, prepare: reached.prepare };
    if (this.last && comparePositions(position, this.last) <= 0) return;
    this.queue.push({ kind: 'checkpoint', position });
    this.last = position;
    this.wake();
  }

  private take(resolved: AllStreamResolvedEvent): void {
    if (this.closed || this.fault) return;
    let position: Position;
    try {
      position = positionOf(resolved);
      if (this.last && comparePositions(position, this.last) <= 0) return;
      const event = resolved.event!;
      if (!isSystemEvent(event.streamId, event.type)) {
        this.queue.push({ kind: 'event', event: fromResolvedEvent(resolved) });
      }
    } catch (error) {
      this.fault = error as Error;
      this.stopCurrent?.();
      this.wake();
      return;
    }
    this.last = position;
    this.wake();
  }

  private markCaughtUp(): void {
    if (this.caughtUp || this.closed) return;
    this.caughtUp = true;
    this.queue.push({ kind: 'caught-up' });
    this.wake();
  }
}

/** A regular expression matching exactly these names (system types start with `$`: never ours). */
function exactly(names: readonly string[]): string {
  return `^(?:${names.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})$`;
}
