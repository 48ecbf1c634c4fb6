import {
  AppendResult,
  EventStore,
  EventSubscription,
  LogPage,
  RecordedEvent,
  SubscriptionMessage,
} from '../event-store.port';
import { SqliteCheckpointStore } from '../embedded/sqlite-checkpoint-store';
import type { ChainLink } from '../integrity/history-chain';
import { EventProcessor, ProcessorLogger } from './event-processor';

/** A store that accepts a subscription and never sends a message on it: a hung server. */
class SilentEventStore extends EventStore {
  pingAnswer: Error | null = new Error('EventStoreDB did not answer within 5000 ms');

  append(): Promise<AppendResult> {
    return Promise.reject(new Error('not used'));
  }
  readStream(): Promise<RecordedEvent[]> {
    return Promise.resolve([]);
  }
  // eslint-disable-next-line require-yield
  async *readAll(): AsyncIterable<RecordedEvent> {
    return;
  }
  subscribeToAll(): EventSubscription {
    let end: (() => void) | null = null;
    const closed = new Promise<IteratorResult<SubscriptionMessage>>((resolve) => {
      end = () => resolve({ done: true, value: undefined });
    });
    return {
      close: () => {
        end?.();
        return Promise.resolve();
      },
      [Symbol.asyncIterator]: () => ({ next: () => closed }),
    };
  }
  headPosition() {
    return Promise.resolve(null);
  }
  readonly chainScope = 'log' as const;
  queryLog(): Promise<LogPage> {
    return Promise.resolve({ events: [], next: null });
  }
  // eslint-disable-next-line require-yield
  async *readChain(): AsyncIterable<ChainLink> {
    return;
  }
  ping(): Promise<void> {
    return this.pingAnswer === null ? Promise.resolve() : Promise.reject(this.pingAnswer);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('EventProcessor on a store that does not answer', () => {
  it('says so in its log while catching up, naming what a ping of the store answers, again and again', async () => {
    const store = new SilentEventStore();
    const parking = SqliteCheckpointStore.open(':memory:');
    const warnings: string[] = [];
    const logger: ProcessorLogger = {
      log: () => undefined,
      warn: (m) => warnings.push(m),
      error: () => undefined,
    };
    const processor = new EventProcessor(
      store,
      {
        name: 'silent',
        loadCheckpoint: () => Promise.resolve(null),
        handle: () => undefined,
        commit: () => Promise.resolve(),
      },
      { parking, logger, silenceWarningMs: 30 },
    );
    const started = processor.start();
    started.catch(() => undefined);
    while (warnings.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(warnings[0]).toMatch(
      /^No answer from the event store for \d+ s while catching up after the start \(EventStoreDB did not answer within 5000 ms\); still waiting$/,
    );
    store.pingAnswer = null;
    const seen = warnings.length;
    while (warnings.length === seen) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(warnings.at(-1)).toContain('(it answers a ping)');
    await processor.stop();
    await expect(started).rejects.toThrow('stopped before catching up');
    await parking.close();
  });
});
