import type { ChainLink, ChainScope } from './integrity/history-chain';
import {
  AppendResult,
  ChainRef,
  EventStore,
  EventSubscription,
  ExpectedRevision,
  LinkedChainLink,
  LogPage,
  LogQuery,
  NewEvent,
  ReadAllOptions,
  RecordedEvent,
  SubscribeOptions,
  SubscriptionMessage,
} from './event-store.port';
import { Position } from './position';

/**
 * An EventStore in front of another, forwarding every call: a decorator (the upcasting, the
 * personal data's encryption) overrides only what it changes.
 */
export abstract class ForwardingEventStore extends EventStore {
  constructor(
    /** The store underneath, for what only it offers (statistics, tests). */
    readonly inner: EventStore,
  ) {
    super();
  }

  override append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    return this.inner.append(stream, events, expected);
  }

  override readStream(stream: string, options?: { fromRevision?: number }): Promise<RecordedEvent[]> {
    return this.inner.readStream(stream, options);
  }

  override queryLog(query: LogQuery): Promise<LogPage> {
    return this.inner.queryLog(query);
  }

  override readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent> {
    return this.inner.readAll(options);
  }

  override subscribeToAll(options?: SubscribeOptions): EventSubscription {
    return this.inner.subscribeToAll(options);
  }

  override asStored(): EventStore {
    return this.inner.asStored();
  }

  /** The chain covers events as stored: read from the store underneath, untouched. */
  override get chainScope(): ChainScope {
    return this.inner.chainScope;
  }

  override readChain(after?: Position): AsyncIterable<ChainLink> {
    return this.inner.readChain(after);
  }

  override readChainLinks(events: readonly ChainRef[]): Promise<LinkedChainLink[]> {
    return this.inner.readChainLinks(events);
  }

  override headPosition(): Promise<Position | null> {
    return this.inner.headPosition();
  }

  override endPosition(): Promise<Position | null> {
    return this.inner.endPosition();
  }

  override ping(): Promise<void> {
    return this.inner.ping();
  }

  override close(): Promise<void> {
    return this.inner.close();
  }
}

/** `subscription` with each event it delivers replaced by `map(event)`; the other messages as they come. */
export function mappedSubscription(
  subscription: EventSubscription,
  map: (event: RecordedEvent) => RecordedEvent | Promise<RecordedEvent>,
): EventSubscription {
  return {
    close: () => subscription.close(),
    [Symbol.asyncIterator](): AsyncIterator<SubscriptionMessage> {
      const iterator = subscription[Symbol.asyncIterator]();
      return {
        async next() {
          const result = await iterator.next();
          if (result.done || result.value.kind !== 'event') return result;
          return { done: false, value: { kind: 'event', event: await map(result.value.event) } };
        },
        async return() {
          await subscription.close();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/** Messages a batch-mapped subscription gathers at most before mapping them. */
const MAP_BATCH = 256;
const YIELDED = Symbol('yielded');
const nextTurn = () => new Promise<typeof YIELDED>((resolve) => setImmediate(() => resolve(YIELDED)));

/**
 * `subscription` with its events mapped many at a time by `mapBatch` (which answers them in the
 * same order): every message already delivered by the time the event loop turns (a catch-up) goes
 * in one batch, so a mapping that asks a server (the data keys) asks once per batch, not per
 * event; a live event arriving alone is mapped alone, within one turn.
 */
export function batchMappedSubscription(
  subscription: EventSubscription,
  mapBatch: (events: RecordedEvent[]) => Promise<RecordedEvent[]>,
): EventSubscription {
  const iterator = subscription[Symbol.asyncIterator]();
  const ready: SubscriptionMessage[] = [];
  let ended = false;
  /** A next() asked for and not yet awaited: the first of the following batch. */
  let carried: Promise<IteratorResult<SubscriptionMessage>> | null = null;

  const gather = async (): Promise<void> => {
    const batch: SubscriptionMessage[] = [];
    let result = await (carried ?? iterator.next());
    carried = null;
    for (;;) {
      if (result.done) {
        ended = true;
        break;
      }
      batch.push(result.value);
      if (batch.length >= MAP_BATCH) break;
      const pending = iterator.next();
      const settled = await Promise.race([pending, nextTurn()]);
      if (settled === YIELDED) {
        // Not delivered within the turn: the next batch starts with it. Its failure is seen there.
        pending.catch(() => undefined);
        carried = pending;
        break;
      }
      result = settled;
    }
    const events = batch.flatMap((message) => (message.kind === 'event' ? [message.event] : []));
    const mapped = events.length === 0 ? [] : await mapBatch(events);
    let at = 0;
    for (const message of batch)
      ready.push(message.kind === 'event' ? { kind: 'event', event: mapped[at++] } : message);
  };

  return {
    close: () => subscription.close(),
    [Symbol.asyncIterator](): AsyncIterator<SubscriptionMessage> {
      return {
        async next() {
          while (ready.length === 0) {
            if (ended) return { done: true, value: undefined };
            await gather();
          }
          return { done: false, value: ready.shift()! };
        },
        async return() {
          await subscription.close();
          return { done: true, value: undefined };
        },
      };
    },
  };
}
