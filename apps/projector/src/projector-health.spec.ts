import { EventStore, HostedProcessor, ProcessorHost } from '@chronicle/event-store';
import { MetricsServer, OperatorRoute } from '@chronicle/metrics';
import { ReadStore } from '@chronicle/read-models';
import { ProjectorHealth } from './projector-health';

describe('ProjectorHealth', () => {
  const routes = new Map<string, OperatorRoute>();
  const server = { route: (path: string, answer: OperatorRoute) => routes.set(path, answer) };
  let readStoreUp = true;
  const eventStore = { ping: () => Promise.resolve() };
  const readStore = {
    ping: () => (readStoreUp ? Promise.resolve() : Promise.reject(new Error('connection refused'))),
  };

  /** The projector's units: the saga's can be made to stop for good. */
  let stopSagaForGood!: (error: Error) => void;
  const unit = (failed = new Promise<Error>(() => undefined)): HostedProcessor => ({
    start: () => Promise.resolve(),
    stop: () => Promise.resolve(),
    isCaughtUp: false,
    position: null,
    failed,
  });
  const processors = new ProcessorHost(
    { mongodbUri: 'mongodb://db/chronicle' },
    'projector',
    {
      'read-models': unit(),
      'saga:password': unit(new Promise<Error>((resolve) => (stopSagaForGood = resolve))),
    },
    { startOnBootstrap: false },
  );

  beforeAll(() => {
    new ProjectorHealth(
      server as unknown as MetricsServer,
      eventStore as unknown as EventStore,
      readStore as unknown as ReadStore,
      processors,
    ).onModuleInit();
  });

  it('is live while it runs', async () => {
    expect(await routes.get('/health/live')!()).toEqual({
      status: 200,
      contentType: 'application/json',
      body: JSON.stringify({ status: 'ok', details: {} }),
    });
  });

  it('is ready while both stores answer, and says which one does not', async () => {
    readStoreUp = true;
    const ready = await routes.get('/health/ready')!();
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toEqual({
      status: 'ok',
      details: { eventStore: { status: 'up' }, readStore: { status: 'up' } },
    });
    readStoreUp = false;
    const down = await routes.get('/health/ready')!();
    expect(down.status).toBe(503);
    expect(JSON.parse(down.body)).toEqual({
      status: 'error',
      details: { eventStore: { status: 'up' }, readStore: { status: 'down', message: 'connection refused' } },
    });
  });

  it('is not ready once a processor of its host has stopped for good, saying why; catching up is no reason', async () => {
    readStoreUp = true;
    stopSagaForGood(new Error('The checkpoint of saga:password lies beyond the end of the event log'));
    await new Promise(setImmediate);

    const ready = await routes.get('/health/ready')!();

    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toEqual({
      status: 'error',
      details: {
        eventStore: { status: 'up' },
        readStore: { status: 'up' },
        'saga:password': {
          status: 'down',
          message: 'stopped: The checkpoint of saga:password lies beyond the end of the event log',
        },
      },
    });
  });
});
