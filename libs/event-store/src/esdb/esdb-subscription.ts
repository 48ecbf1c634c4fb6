import {
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type EventStoreDBClient,
  eventTypeFilter,
  excludeSystemEvents,
  START,
} from '@eventstore/db-client';
import { backOffDelay } from '@chronicle/config';
import { type EventSubscription, InvalidPositionError, type SubscriptionMessage } from '../event-store.port';
import { comparePositions, formatPosition, type Position, positionProblem } from '../position';
import { fromResolvedEvent, isInvalidArgument, isSystemEvent, positionOf, readLogEnd } from './esdb-events';

export interface ResubscribeOptions {
  /** Wait before the first resubscription after a drop; doubled per failed attempt. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** Told of every drop before the wait, e.g. to log it. */
  onDropped?: (error: Error, attempt: number, delayMs: number) => void;
  /** Told of every checkpoint the server sent that names no record of its log, e.g. to log it. */
  onCheckpointIgnored?: (position: Position, reason: string) => void;
}

/** Messages buffered ahead of the consumer before the server stream is paused. */
const HIGH_WATER_MARK = 256;

/** Exponential back-off with jitter, so many subscribers do not reconnect in lock-step. */
export function retryDelay(
  attempt: number,
  options: Pick<ResubscribeOptions, 'initialDelayMs' | 'maxDelayMs'>,
): number {
  return backOffDelay(attempt, {
    initialMs: options.initialDelayMs,
    maxMs: options.maxDelayMs,
    jitter: 'equal',
  });
}

class SubscriptionEnded extends Error {
  constructor() {
    super('The server ended the subscription');
    this.name = 'SubscriptionEnded';
  }
}

/** Something the client announced out of band, to be applied after the events it had received. */
interface Deferred {
  afterReceived: number;
  apply(): void;
}

/**
 * A catch-up subscription to `$all` that survives drops: whenever the server stream fails or ends
 * it subscribes again, after a back-off, from the last position it took in. Subscriptions exclude
 * their start position, so nothing is delivered twice and nothing is skipped.
 *
 * Filter checkpoints are distrusted, because servers have sent wrong ones: (2^64-1, 2^64-1) on
 * 24.2 to 24.10.4 (KurrentDB PR 4892), the end of the log after an empty page (PR 4975), and the
 * end of the log before the event at that very position (24.2 to 24.10.4). So a checkpoint never
 * suppresses an event (events are de-duplicated against the last event only), one that names no
 * record of the log is ignored and reported, one the client announces while events it received
 * before are still buffered is passed on only after them, and every one is held until the server
 * has sent something beyond it: by then every event at or before it has come. So the last
 * checkpoint of a quiet log waits for the next message.
 */
export class EsdbSubscription implements EventSubscription {
  private readonly queue: SubscriptionMessage[] = [];
  private wakeConsumer: (() => void) | null = null;
  /** The last event taken in: anything at or before it is a repeat. */
  private lastEvent: Position | undefined;
  /** The last checkpoint passed on: where a resubscription may start when it is beyond the last event. */
  private lastCheckpoint: Position | undefined;
  /** The last record of the log as last read; read again for a checkpoint beyond it and the last event. */
  private knownEnd: Position | null = null;
  /** The latest checkpoint, held until the server sends something beyond it. */
  private held: Position | null = null;
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
    this.lastEvent = after;
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

  /** Where a new server subscription starts (exclusive): the later of the last event and checkpoint. */
  private resumeAfter(): Position | undefined {
    const { lastEvent, lastCheckpoint } = this;
    if (!lastEvent || !lastCheckpoint) return lastEvent ?? lastCheckpoint;
    return comparePositions(lastCheckpoint, lastEvent) > 0 ? lastCheckpoint : lastEvent;
  }

  private async run(): Promise<void> {
    let attempt = 0;
    while (!this.closed && !this.fault) {
      const error = await this.follow(() => (attempt = 0));
      if (this.closed || this.fault) return;
      const from = this.resumeAfter();
      if (from && isInvalidArgument(error)) {
        // The server refuses the start position itself: resubscribing cannot help.
        this.fault = new InvalidPositionError(formatPosition(from), 'no record starts there');
        this.wake();
        return;
      }
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
      let received = 0;
      // The client announces caught-up and checkpoints out of band, possibly while events that
      // precede them are still buffered in its stream: each belongs after the events received
      // by then, buffered ones included.
      const deferred: Deferred[] = [];
      const applyDue = () => {
        while (deferred.length > 0 && deferred[0].afterReceived <= received) deferred.shift()!.apply();
      };
      const defer = (afterReceived: number, apply: () => void) => {
        deferred.push({ afterReceived, apply });
        applyDue();
      };

      const subscription = this.client.subscribeToAll({
        fromPosition: this.resumeAfter() ?? START,
        filter:
          this.eventTypes === null
            ? excludeSystemEvents()
            : eventTypeFilter({
                regex: exactly(this.eventTypes),
                // The server reports how far its filter has scanned, every search window.
                checkpointInterval: 1,
                // The client waits for this before it reads on, so the check keeps the order.
                checkpointReached: async (_subscription, reached) => {
                  progressed();
                  const afterReceived = received + subscription.readableLength;
                  const checked = await this.checkedCheckpoint(reached);
                  if (checked) defer(afterReceived, () => this.takeCheckpoint(checked));
                },
              }),
      });
      this.current = subscription;

      const onData = (resolved: AllStreamResolvedEvent) => {
        received++;
        progressed();
        this.take(resolved);
        applyDue();
        if (this.queue.length >= HIGH_WATER_MARK) subscription.pause();
      };
      const onCaughtUp = () => {
        progressed();
        defer(received + subscription.readableLength, () => this.markCaughtUp());
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

  /** The checkpoint, or null when it names no record of the log (reported, then ignored). */
  private async checkedCheckpoint(reached: { commit: bigint; prepare: bigint }): Promise<Position | null> {
    const position = { commit: reached.commit, prepare: reached.prepare };
    const problem = positionProblem(position);
    if (problem !== null) return this.ignoreCheckpoint(position, problem);
    // At or before the last event or the known end, the log holds it: only beyond both is it read.
    for (const known of [this.lastEvent, this.knownEnd]) {
      if (known && comparePositions(position, known) <= 0) return position;
    }
    try {
      this.knownEnd = await readLogEnd(this.client);
    } catch {
      // Unchecked, it is not trusted; the next checkpoint comes soon enough.
      return null;
    }
    if (this.knownEnd === null || comparePositions(position, this.knownEnd) > 0) {
      const end =
        this.knownEnd === null ? 'an empty log' : `a log ending at ${formatPosition(this.knownEnd)}`;
      return this.ignoreCheckpoint(position, `beyond the end of the log (${end})`);
    }
    return position;
  }

  private ignoreCheckpoint(position: Position, reason: string): null {
    if (!this.closed) this.options.onCheckpointIgnored?.(position, reason);
    return null;
  }

  /**
   * Holds a checkpoint until a later event or checkpoint shows the server has read past it: an
   * unfixed server sends its end-of-log checkpoint before the event at that position, and the log
   * may have grown since, so no read of its end tells such a checkpoint apart.
   */
  private takeCheckpoint(position: Position): void {
    if (this.closed || this.fault) return;
    this.releaseHeld(position);
    // One at or before the held one (a server repeats its end-of-log checkpoint) says nothing new.
    if (this.held) return;
    if (this.lastEvent && comparePositions(position, this.lastEvent) <= 0) return;
    this.held = position;
  }

  /** Passes the held checkpoint on when `reached` lies beyond it. */
  private releaseHeld(reached: Position): void {
    if (this.held && comparePositions(reached, this.held) > 0) {
      this.passCheckpoint(this.held);
      this.held = null;
    }
  }

  private passCheckpoint(position: Position): void {
    for (const passed of [this.lastEvent, this.lastCheckpoint]) {
      if (passed && comparePositions(position, passed) <= 0) return;
    }
    this.queue.push({ kind: 'checkpoint', position });
    this.lastCheckpoint = position;
    this.wake();
  }

  private take(resolved: AllStreamResolvedEvent): void {
    if (this.closed || this.fault) return;
    let position: Position;
    try {
      position = positionOf(resolved);
      // Only an event makes a later one a repeat: a checkpoint may have been wrong.
      if (this.lastEvent && comparePositions(position, this.lastEvent) <= 0) return;
      this.releaseHeld(position);
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
    this.lastEvent = position;
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
