import {
  AppendResult,
  ChainRef,
  EventStore,
  EventStoreObserver,
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
} from '../event-store.port';
import { traced } from '@chronicle/tracing';
import type { ChainLink, ChainScope } from '../integrity/history-chain';
import { Position } from '../position';
import { UpcasterRegistry } from './upcaster-registry';

/**
 * The EventStore port with every read upcast: aggregates, projections, sagas and the audit all
 * see the newest version of each event type. Appends go through untouched (writers already
 * write the newest version), and stored events are never rewritten.
 */
export class UpcastingEventStore extends EventStore {
  constructor(
    /** The adapter underneath, for what only it offers (statistics, tests). */
    readonly inner: EventStore,
    private readonly registry: UpcasterRegistry,
    /** Every append of the process passes here, whatever the adapter: timed once, here. */
    private readonly observer: EventStoreObserver | null = null,
  ) {
    super();
  }

  override append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    return traced('event-store append', () => this.observedAppend(stream, events, expected), {
      attributes: { 'chronicle.stream': stream, 'chronicle.events': events.length },
    });
  }

  private observedAppend(
    stream: string,
    events: NewEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult> {
    const observer = this.observer;
    if (observer === null) return this.inner.append(stream, events, expected);
    const started = performance.now();
    const settled = (ok: boolean) => observer.appended((performance.now() - started) / 1000, ok);
    return this.inner.append(stream, events, expected).then(
      (result) => {
        settled(true);
        return result;
      },
      (error: unknown) => {
        settled(false);
        throw error;
      },
    );
  }

  override async readStream(stream: string, options?: { fromRevision?: number }): Promise<RecordedEvent[]> {
    return (await this.inner.readStream(stream, options)).map((event) => this.registry.upcast(event));
  }

  override async queryLog(query: LogQuery): Promise<LogPage> {
    const { eventTypes } = query;
    const page = await this.inner.queryLog(
      eventTypes === undefined ? query : { ...query, eventTypes: this.registry.storedTypesOf(eventTypes) },
    );
    return { events: page.events.map((event) => this.registry.upcast(event)), next: page.next };
  }

  override async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    const { eventTypes, exceptTypes } = options;
    // Older stored versions of a listed type are listed too: they are read as the newest.
    const read = this.inner.readAll({
      ...options,
      ...(eventTypes === undefined ? {} : { eventTypes: this.registry.storedTypesOf(eventTypes) }),
      ...(exceptTypes === undefined ? {} : { exceptTypes: this.registry.storedTypesOf(exceptTypes) }),
    });
    for await (const event of read) yield this.registry.upcast(event);
  }

  override subscribeToAll(options: SubscribeOptions = {}): EventSubscription {
    const { eventTypes } = options;
    // Older stored versions of a wanted type are wanted too: they are read as the newest.
    const subscription = this.inner.subscribeToAll(
      eventTypes === undefined
        ? options
        : { ...options, eventTypes: this.registry.storedTypesOf(eventTypes) },
    );
    const registry = this.registry;
    return {
      close: () => subscription.close(),
      [Symbol.asyncIterator](): AsyncIterator<SubscriptionMessage> {
        const iterator = subscription[Symbol.asyncIterator]();
        return {
          async next() {
            const result = await iterator.next();
            if (result.done || result.value.kind !== 'event') return result;
            return { done: false, value: { kind: 'event', event: registry.upcast(result.value.event) } };
          },
          async return() {
            await subscription.close();
            return { done: true, value: undefined };
          },
        };
      },
    };
  }

  /** Reads without the upcasting: the adapter underneath, as stored. */
  override asStored(): EventStore {
    return this.inner.asStored();
  }

  /** The chain covers events as stored: read from the adapter, never upcast. */
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
