import { ChronicleMetrics } from '@chronicle/metrics';
import { GetProjectionStatusHandler } from './get-projection-status/get-projection-status.handler';
import { ProjectionsStatus, ProjectionStatus } from './get-projection-status/get-projection-status.query';
import { ProjectionMetrics } from './projection-metrics';

const entry = (name: string, fields: Partial<ProjectionStatus> = {}): ProjectionStatus => ({
  name,
  checkpoint: null,
  lag: 0,
  lagExact: true,
  lagSeconds: 0,
  ...fields,
});
const parked = (processor: string, eventId: string): ProjectionsStatus['parked'][number] => ({
  processor,
  eventId,
  stream: 's-1',
  type: 'PasswordChanged.v1',
  position: '7',
  reason: 'refused',
  attempts: 3,
  parkedAt: '2026-11-27T09:00:00.000Z',
});

describe('ProjectionMetrics', () => {
  let metrics: ChronicleMetrics;
  /** The status query, answering what each spec sets. */
  let handler: GetProjectionStatusHandler;
  let status: ProjectionsStatus;
  let execute: jest.SpyInstance;

  beforeEach(() => {
    metrics = new ChronicleMetrics();
    handler = new GetProjectionStatusHandler(null as never, null as never, null as never, null as never);
    status = { head: '40', projections: [], sagas: [], parked: [] };
    execute = jest.spyOn(handler, 'execute').mockImplementation(() => Promise.resolve(status));
    new ProjectionMetrics(handler, metrics).onModuleInit();
  });

  /** A scrape: every sample of the four gauges, as `name{labels} value`. */
  async function scrape(): Promise<string[]> {
    const families = await metrics.registry.getMetricsAsJSON();
    return families
      .filter((family) => /^chronicle_(projection|parked)/.test(family.name))
      .flatMap((family) =>
        family.values.map((sample) => {
          const labels = Object.entries(sample.labels).map(([key, value]) => `${key}=${String(value)}`);
          return `${family.name}{${labels.join(',')}} ${sample.value}`;
        }),
      );
  }

  it('shows each projection and saga: its lag in events and seconds, and the commit position it reached', async () => {
    status = {
      head: '40',
      projections: [
        entry('customers', { checkpoint: '40', lag: 0 }),
        entry('users', { checkpoint: '35:30', lag: 5, lagSeconds: 2.5 }),
      ],
      sagas: [entry('saga:password', { lag: 10_000, lagExact: false, lagSeconds: 600 })],
      parked: [],
    };

    expect(await scrape()).toEqual([
      'chronicle_projection_lag_events{kind=projection,name=customers} 0',
      'chronicle_projection_lag_events{kind=projection,name=users} 5',
      'chronicle_projection_lag_events{kind=saga,name=saga:password} 10000',
      'chronicle_projection_lag_seconds{kind=projection,name=customers} 0',
      'chronicle_projection_lag_seconds{kind=projection,name=users} 2.5',
      'chronicle_projection_lag_seconds{kind=saga,name=saga:password} 600',
      // None for the saga: it has processed nothing yet.
      'chronicle_projection_position{kind=projection,name=customers} 40',
      'chronicle_projection_position{kind=projection,name=users} 35',
      'chronicle_parked_messages{processor=read-models} 0',
      'chronicle_parked_messages{processor=saga:password} 0',
    ]);
  });

  it('describes each gauge', async () => {
    const families = await metrics.registry.getMetricsAsJSON();
    const help = Object.fromEntries(
      families
        .filter((f) => /^chronicle_(projection|parked)/.test(f.name))
        .map((f) => [f.name, [f.type, f.help]]),
    );

    expect(help).toEqual({
      chronicle_projection_lag_events: ['gauge', 'Events in the store not yet processed (capped)'],
      chronicle_projection_lag_seconds: [
        'gauge',
        'How long the oldest unprocessed event has waited; 0 when caught up',
      ],
      chronicle_projection_position: [
        'gauge',
        'Commit position of the last event processed (absent before the first)',
      ],
      chronicle_parked_messages: [
        'gauge',
        'Messages a processor gave up on and set aside, by processor (0 for each one with none)',
      ],
    });
  });

  it('counts parked messages per processor, those of a processor it does not run too', async () => {
    status = {
      head: '40',
      projections: [entry('customers'), entry('users')],
      sagas: [entry('saga:password')],
      parked: [parked('saga:password', 'e-1'), parked('saga:other', 'e-2'), parked('saga:password', 'e-3')],
    };

    expect((await scrape()).filter((sample) => sample.startsWith('chronicle_parked'))).toEqual([
      'chronicle_parked_messages{processor=read-models} 0',
      'chronicle_parked_messages{processor=saga:password} 2',
      'chronicle_parked_messages{processor=saga:other} 1',
    ]);
  });

  it('leaves the read models out when this process does not know them', async () => {
    status = { head: null, projections: [], sagas: [entry('saga:password')], parked: [] };

    expect(await scrape()).toEqual([
      'chronicle_projection_lag_events{kind=saga,name=saga:password} 0',
      'chronicle_projection_lag_seconds{kind=saga,name=saga:password} 0',
      'chronicle_parked_messages{processor=saga:password} 0',
    ]);
  });

  it('shows a checkpoint it cannot read as NaN rather than failing the scrape', async () => {
    status = {
      head: '40',
      projections: [],
      sagas: [entry('saga:password', { checkpoint: 'garbled' })],
      parked: [],
    };

    expect((await scrape()).filter((sample) => sample.startsWith('chronicle_projection_position'))).toEqual([
      'chronicle_projection_position{kind=saga,name=saga:password} NaN',
    ]);
  });

  it('asks for the status once per scrape, and afresh for each scrape, forgetting what is gone', async () => {
    status = {
      head: '40',
      projections: [],
      sagas: [entry('saga:password', { checkpoint: '40', lag: 3 })],
      parked: [parked('saga:other', 'e-1')],
    };
    await scrape();
    expect(execute).toHaveBeenCalledTimes(1);

    status = {
      head: '41',
      projections: [],
      sagas: [entry('saga:password', { checkpoint: '41', lag: 1 })],
      parked: [],
    };

    expect(await scrape()).toEqual([
      'chronicle_projection_lag_events{kind=saga,name=saga:password} 1',
      'chronicle_projection_lag_seconds{kind=saga,name=saga:password} 0',
      'chronicle_projection_position{kind=saga,name=saga:password} 41',
      'chronicle_parked_messages{processor=saga:password} 0',
    ]);
    expect(execute).toHaveBeenCalledTimes(2);
  });

  it('asks again after a status query that failed', async () => {
    execute.mockRejectedValueOnce(new Error('store unavailable'));
    await expect(metrics.registry.getMetricsAsJSON()).rejects.toThrow('store unavailable');

    status = { head: '40', projections: [], sagas: [entry('saga:password', { lag: 2 })], parked: [] };

    expect(await scrape()).toContain('chronicle_projection_lag_events{kind=saga,name=saga:password} 2');
  });

  it('does nothing at start-up without the metrics module', () => {
    expect(() => new ProjectionMetrics(handler).onModuleInit()).not.toThrow();
  });
});
