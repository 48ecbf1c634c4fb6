import { EventStore } from '@chronicle/event-store';
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

  beforeAll(() => {
    new ProjectorHealth(
      server as unknown as MetricsServer,
      eventStore as unknown as EventStore,
      readStore as unknown as ReadStore,
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
});
