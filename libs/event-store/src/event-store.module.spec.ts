import { ChronicleConfigModule, ConfigError, parseConfig } from '@chronicle/config';
import { EVENT_UPCASTERS } from '@chronicle/domain';
import { ChronicleMetrics } from '@chronicle/metrics';
import { Global, Inject, Injectable, Logger, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteCheckpointStore, SqliteEventStore } from './embedded';
import { EsdbEventStore } from './esdb';
import { EventStoreModule, openCheckpointStore, openEventStore } from './event-store.module';
import { EventStore, type EventStoreObserver } from './event-store.port';
import { newEvent } from './new-event.spec-helper';
import { position } from './position';
import { CheckpointStore } from './processing';
import { PersonalDataEventStore } from './personal-data';
import { MongoCheckpointStore } from './processing/mongo';
import { UpcastingEventStore } from './upcasting';

describe('EventStoreModule', () => {
  let dataDir: string;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'event-store-module-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  /** A feature module's provider: it sees the stores only if the module exports them. */
  @Injectable()
  class StoreUser {
    constructor(
      @Inject(EventStore) readonly store: EventStore,
      @Inject(CheckpointStore) readonly checkpoints: CheckpointStore,
    ) {}
  }
  @Module({ providers: [StoreUser] })
  class FeatureModule {}

  async function start(metrics?: ChronicleMetrics) {
    @Global()
    @Module({ providers: [{ provide: ChronicleMetrics, useValue: metrics }], exports: [ChronicleMetrics] })
    class MetricsModule {}
    const imports = [
      ChronicleConfigModule.forRoot(parseConfig({ DATA_DIR: dataDir })),
      EventStoreModule.forRoot(),
      FeatureModule,
    ];
    const app = await Test.createTestingModule({
      imports: metrics ? [MetricsModule, ...imports] : imports,
    }).compile();
    return app.init();
  }

  it('provides the embedded store, upcasting its reads, and the checkpoints in its file; shutdown closes both', async () => {
    const app = await start();
    const store = app.get(EventStore);
    const checkpoints = app.get(CheckpointStore);
    expect(store).toBeInstanceOf(UpcastingEventStore);
    expect(adapterOf(store)).toBeInstanceOf(SqliteEventStore);
    expect(checkpoints).toBeInstanceOf(SqliteCheckpointStore);
    expect(app.get(StoreUser)).toEqual({ store, checkpoints });

    // Stored by an older writer, read as the newest version by the domain's upcasters.
    const [upcaster] = EVENT_UPCASTERS;
    await store
      .asStored()
      .append('old-1', [newEvent(upcaster.from, { email: 'a@example.com' })], 'no_stream');
    expect((await store.readStream('old-1')).map((event) => event.type)).toEqual([upcaster.to]);
    await checkpoints.store('tested', position(1));
    expect(readdirSync(dataDir).filter((file) => file.endsWith('.db'))).toEqual([
      'data-keys.db',
      'events.db',
    ]);

    await app.close();

    await expect(store.readStream('old-1')).rejects.toThrow('The event store is closed');
    await expect(checkpoints.load('tested')).rejects.toThrow();
  });

  it("tells the metrics' observer of each append and commit, when there are metrics", async () => {
    const appended: boolean[] = [];
    const committed: number[] = [];
    const observer: EventStoreObserver = {
      appended: (_seconds, ok) => appended.push(ok),
      committed: (events) => committed.push(events),
    };
    const app = await start({ eventStore: observer } as unknown as ChronicleMetrics);

    await app.get(EventStore).append('observed-1', [newEvent('Tested.v1', {})], 'no_stream');

    expect(appended).toEqual([true]);
    expect(committed).toEqual([1]);
    await app.close();
  });
});

describe('openEventStore and openCheckpointStore', () => {
  let dataDir: string;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'event-store-open-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('open EventStoreDB when EVENTSTORE_URL is set, with the checkpoints in a file of their own', async () => {
    const config = parseConfig({ DATA_DIR: dataDir, EVENTSTORE_URL: 'esdb://127.0.0.1:1?tls=false' });

    const store = await openEventStore(config);
    const checkpoints = await openCheckpointStore(config);

    expect(store).toBeInstanceOf(UpcastingEventStore);
    expect(adapterOf(store)).toBeInstanceOf(EsdbEventStore);
    expect(checkpoints).toBeInstanceOf(SqliteCheckpointStore);
    await checkpoints.store('tested', position(7));
    await expect(checkpoints.load('tested')).resolves.toEqual(position(7));
    expect(readdirSync(dataDir).filter((file) => file.endsWith('.db'))).toEqual(['checkpoints.db']);
    await checkpoints.close();
    await store.close();
  });

  it.each([
    ['mongodb://127.0.0.1:1/audit', 'audit'],
    ['mongodb://127.0.0.1:1', 'chronicle'],
  ])('keeps the checkpoints in MongoDB when MONGODB_URI is set: %s in database %s', async (uri, database) => {
    const checkpoints = {} as MongoCheckpointStore;
    const connect = jest.spyOn(MongoCheckpointStore, 'connect').mockResolvedValue(checkpoints);
    try {
      await expect(openCheckpointStore(parseConfig({ DATA_DIR: dataDir, MONGODB_URI: uri }))).resolves.toBe(
        checkpoints,
      );
      expect(connect.mock.calls).toEqual([[uri, database]]);
    } finally {
      connect.mockRestore();
    }
  });

  it('refuses a bad EVENTSTORE_URL option naming the variable, never quoting its password', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const config = (url: string) => parseConfig({ DATA_DIR: dataDir, EVENTSTORE_URL: url });
      const refused = openEventStore(config('esdb://admin:S3cretPw@127.0.0.1:1?tls=perhaps'));
      await expect(refused).rejects.toThrow(ConfigError);
      const error = (await refused.catch((caught: unknown) => caught)) as ConfigError;
      expect(error.message).toBe(
        'Invalid configuration: EVENTSTORE_URL is not a valid EventStoreDB connection string: ' +
          'Unexpected "perhaps", expected true or false.',
      );
      expect(JSON.stringify({ ...error, stack: error.stack })).not.toContain('S3cretPw');
      // The client warns of an option it does not know, quoting the string: without the password.
      const store = await openEventStore(config('esdb://admin:S3cretPw@127.0.0.1:1?tls=false&colour=blue'));
      await store.close();
      expect(warn).toHaveBeenCalled();
      expect(JSON.stringify(warn.mock.calls)).not.toContain('S3cretPw');
    } finally {
      warn.mockRestore();
    }
  });

  it("gives EventStoreDB's adapter the observer, and logs its dropped subscriptions and ignored checkpoints", async () => {
    const connect = jest.spyOn(EsdbEventStore, 'connect');
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const observer: EventStoreObserver = { appended: () => undefined, committed: () => undefined };
    try {
      const store = await openEventStore(
        parseConfig({ DATA_DIR: dataDir, EVENTSTORE_URL: 'esdb://127.0.0.1:1?tls=false' }),
        observer,
      );
      await store.close();
      const [url, options] = connect.mock.calls[0];
      expect(url).toBe('esdb://127.0.0.1:1?tls=false');
      expect(options?.observer).toBe(observer);
      const dropped = new Error('connection reset');
      options?.onSubscriptionDropped?.(dropped, 2, 400);
      options?.onCheckpointIgnored?.(position(9, 8), 'before the last event');
      expect(warn.mock.calls).toEqual([
        [{ err: dropped, attempt: 2, delayMs: 400 }, 'Subscription dropped; resubscribing'],
        [
          'Ignored a filter checkpoint at 9:8: before the last event; an EventStoreDB release with ' +
            'KurrentDB PR 4892 and 4975 (24.10.5 or later) sends none',
        ],
      ]);
      expect(warn.mock.contexts.map((logger) => (logger as unknown as { context: string }).context)).toEqual([
        'EventStoreDB',
        'EventStoreDB',
      ]);
    } finally {
      connect.mockRestore();
      warn.mockRestore();
    }
  });
});

/** The adapter under the upcasting and the personal data's encryption. */
function adapterOf(store: EventStore): EventStore {
  const encrypting = (store as UpcastingEventStore).inner;
  expect(encrypting).toBeInstanceOf(PersonalDataEventStore);
  return (encrypting as PersonalDataEventStore).inner;
}
