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

  override readChain(): AsyncIterable<ChainLink> {
    return this.inner.readChain();
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
