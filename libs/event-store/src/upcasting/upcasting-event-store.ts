import { traced } from '@chronicle/tracing';
import {
  AppendResult,
  EventStore,
  EventStoreObserver,
  EventSubscription,
  ExpectedRevision,
  LogPage,
  LogQuery,
  NewEvent,
  ReadAllOptions,
  RecordedEvent,
  SubscribeOptions,
} from '../event-store.port';
import { ForwardingEventStore, mappedSubscription } from '../forwarding-event-store';
import { UpcasterRegistry } from './upcaster-registry';

/**
 * The EventStore port with every read upcast: aggregates, projections, sagas and the audit all
 * see the newest version of each event type. Appends go through untouched (writers already
 * write the newest version), and stored events are never rewritten.
 */
export class UpcastingEventStore extends ForwardingEventStore {
  constructor(
    inner: EventStore,
    private readonly registry: UpcasterRegistry,
    /** Every append of the process passes here, whatever the adapter: timed once, here. */
    private readonly observer: EventStoreObserver | null = null,
  ) {
    super(inner);
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
    return mappedSubscription(subscription, (event) => this.registry.upcast(event));
  }
}
