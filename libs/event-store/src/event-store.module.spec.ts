import { ChronicleConfigModule, parseConfig } from '@chronicle/config';
import { EVENT_UPCASTERS } from '@chronicle/domain';
import { ChronicleMetrics } from '@chronicle/metrics';
import { Global, Module } from '@nestjs/common';
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
import { UpcastingEventStore } from './upcasting';

describe('EventStoreModule', () => {
  let dataDir: string;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'event-store-module-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  async function start(metrics?: ChronicleMetrics) {
    @Global()
    @Module({ providers: [{ provide: ChronicleMetrics, useValue: metrics }], exports: [ChronicleMetrics] })
    class MetricsModule {}
    const imports = [
      ChronicleConfigModule.forRoot(parseConfig({ DATA_DIR: dataDir })),
      EventStoreModule.forRoot(),
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
    expect((store as UpcastingEventStore).inner).toBeInstanceOf(SqliteEventStore);
    expect(checkpoints).toBeInstanceOf(SqliteCheckpointStore);

    // Stored by an older writer, read as the newest version by the domain's upcasters.
    const [upcaster] = EVENT_UPCASTERS;
    await store
      .asStored()
      .append('old-1', [newEvent(upcaster.from, { email: 'a@example.com' })], 'no_stream');
    expect((await store.readStream('old-1')).map((event) => event.type)).toEqual([upcaster.to]);
    await checkpoints.store('tested', position(1));
    expect(readdirSync(dataDir).filter((file) => file.endsWith('.db'))).toEqual(['events.db']);

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
    expect((store as UpcastingEventStore).inner).toBeInstanceOf(EsdbEventStore);
    expect(checkpoints).toBeInstanceOf(SqliteCheckpointStore);
    await checkpoints.store('tested', position(7));
    await expect(checkpoints.load('tested')).resolves.toEqual(position(7));
    expect(readdirSync(dataDir).filter((file) => file.endsWith('.db'))).toEqual(['checkpoints.db']);
    await checkpoints.close();
    await store.close();
  });
});
