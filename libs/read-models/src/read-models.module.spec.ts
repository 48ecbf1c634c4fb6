import { FactoryProvider } from '@nestjs/common';
import { ChronicleConfig } from '@chronicle/config';
import { CheckpointStore, EventStore, ProcessorHost } from '@chronicle/event-store';
import { MemoryReadStore } from './memory/memory-read-store';
import { ReadModelSnapshots } from './memory/snapshot/read-model-snapshots';
import { MongoReadStore } from './mongo/mongo-read-store';
import { ProjectionProcessor } from './projection-processor';
import { ALL_PROJECTIONS } from './projections/all-projections';
import { InProcessProjections, READ_MODELS_CHECKPOINT, ReadModelsModule } from './read-models.module';
import { ReadStore } from './read-store.port';

const config = (overrides: Partial<ChronicleConfig> = {}) =>
  ({
    dataDir: '/data',
    eventStoreUrl: null,
    mongodbUri: null,
    readModelSnapshotEvents: 123,
    ...overrides,
  }) as ChronicleConfig;

/** What InProcessProjections calls, in order, with the processor's start held until released. */
function collaborators() {
  const calls: string[] = [];
  let releaseRestore!: () => void;
  const restored = new Promise<void>((resolve) => (releaseRestore = resolve));
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const processor = {
    start: jest.fn(() => {
      calls.push('processor.start');
      markStarted();
      return Promise.resolve();
    }),
    stop: jest.fn(() => {
      calls.push('processor.stop');
      return Promise.resolve();
    }),
  };
  const readStore = {
    close: jest.fn(() => {
      calls.push('readStore.close');
      return Promise.resolve();
    }),
  };
  const snapshots = {
    restore: jest.fn(async () => {
      calls.push('snapshots.restore');
      await restored;
      calls.push('snapshots.restored');
    }),
    stop: jest.fn(() => {
      calls.push('snapshots.stop');
      return Promise.resolve();
    }),
  };
  return { calls, processor, readStore, snapshots, releaseRestore, started };
}

/** The projections as the API's processor host runs them: placed by `settings`. */
function projections(parts: ReturnType<typeof collaborators>, settings = config(), withSnapshots = true) {
  const unit = new InProcessProjections(
    parts.processor as unknown as ProjectionProcessor,
    parts.readStore as unknown as ReadStore,
    withSnapshots ? (parts.snapshots as unknown as ReadModelSnapshots) : null,
  );
  return new ProcessorHost(settings, 'api', { 'read-models': unit }, { startOnBootstrap: true });
}

describe('InProcessProjections', () => {
  it('restores the snapshot first, then starts the processor', async () => {
    const parts = collaborators();
    const running = projections(parts);

    running.onApplicationBootstrap();
    expect(parts.calls).toEqual(['snapshots.restore']);
    parts.releaseRestore();
    await parts.started;
    await running.onApplicationShutdown();

    expect(parts.calls).toEqual([
      'snapshots.restore',
      'snapshots.restored',
      'processor.start',
      'processor.stop',
      'snapshots.stop',
      'readStore.close',
    ]);
  });

  it('starts the processor without snapshots', async () => {
    const parts = collaborators();
    const running = projections(parts, config(), false);

    running.onApplicationBootstrap();
    await parts.started;
    await running.onApplicationShutdown();

    expect(parts.calls).toEqual(['processor.start', 'processor.stop', 'readStore.close']);
  });

  it('does not start the processor when shut down while the snapshot is read', async () => {
    const parts = collaborators();
    const running = projections(parts);

    running.onApplicationBootstrap();
    const shutdown = running.onApplicationShutdown();
    parts.releaseRestore();
    await shutdown;

    expect(parts.calls).toEqual([
      'snapshots.restore',
      'snapshots.restored',
      'processor.stop',
      'snapshots.stop',
      'readStore.close',
    ]);
  });

  it('runs nothing with MONGODB_URI: the projector process does', async () => {
    const parts = collaborators();
    const running = projections(parts, config({ mongodbUri: 'mongodb://db' }));

    running.onApplicationBootstrap();
    await running.onApplicationShutdown();

    expect(parts.calls).toEqual(['processor.stop', 'snapshots.stop', 'readStore.close']);
  });
});

describe('ReadModelsModule.forRoot', () => {
  const module = ReadModelsModule.forRoot();
  const factory = (token: unknown) =>
    module.providers!.find((provider) => (provider as FactoryProvider).provide === token) as FactoryProvider;
  const eventStore = {} as EventStore;

  it('provides and exports the read store, its processor and the snapshots, to every module', () => {
    expect(module.module).toBe(ReadModelsModule);
    // A unit of the processor host, which alone starts it: the module runs nothing of its own.
    expect(module.providers).not.toContain(InProcessProjections);
    expect(module.exports).toEqual([ReadStore, ProjectionProcessor, ReadModelSnapshots]);
    expect(factory(ReadStore).inject).toEqual([ChronicleConfig]);
    expect(factory(ReadModelSnapshots).inject).toEqual([ChronicleConfig, ReadStore, EventStore]);
    expect(factory(ProjectionProcessor).inject).toEqual([EventStore, ReadStore, CheckpointStore]);
  });

  it('keeps the read models in memory without MONGODB_URI', async () => {
    const store = (await factory(ReadStore).useFactory(config())) as ReadStore;

    expect(store).toBeInstanceOf(MemoryReadStore);
    await store.close();
  });

  it('connects to MongoDB with MONGODB_URI', async () => {
    const mongo = {} as MongoReadStore;
    const connect = jest.spyOn(MongoReadStore, 'connect').mockResolvedValue(mongo);
    try {
      expect(await factory(ReadStore).useFactory(config({ mongodbUri: 'mongodb://db/x' }))).toBe(mongo);
      expect(connect).toHaveBeenCalledWith('mongodb://db/x');
    } finally {
      connect.mockRestore();
    }
  });

  it('snapshots the in-memory models of the embedded event store, in its data directory', () => {
    const snapshots = factory(ReadModelSnapshots).useFactory(config(), new MemoryReadStore(), eventStore);

    expect(snapshots).toBeInstanceOf(ReadModelSnapshots);
    expect(snapshots).toMatchObject({
      file: '/data/read-models.snapshot',
      options: { dataDir: '/data', checkpointName: READ_MODELS_CHECKPOINT, policy: { everyEvents: 123 } },
      policy: { everyEvents: 123 },
    });
  });

  it('snapshots nothing on EventStoreDB (a snapshot is tied to the embedded store) or with MongoDB', () => {
    const snapshots = factory(ReadModelSnapshots);

    expect(
      snapshots.useFactory(config({ eventStoreUrl: 'esdb://es' }), new MemoryReadStore(), eventStore),
    ).toBeNull();
    expect(snapshots.useFactory(config(), {}, eventStore)).toBeNull();
  });

  it('feeds every projection to the processor under the read models checkpoint', () => {
    const processor = factory(ProjectionProcessor).useFactory(
      eventStore,
      new MemoryReadStore(),
      {},
    ) as ProjectionProcessor;

    expect(READ_MODELS_CHECKPOINT).toBe('read-models');
    expect(processor).toBeInstanceOf(ProjectionProcessor);
    expect(processor.name).toBe('read-models');
    expect(processor).toMatchObject({ handler: { projections: ALL_PROJECTIONS, name: 'read-models' } });
  });
});
