import { BackgroundHandler } from '@chronicle/config';
import { position } from '../position';
import {
  HostedProcessor,
  processorChecks,
  ProcessorHost,
  ProcessorStatus,
  readinessMet,
} from './processor-host';

const EMBEDDED = { mongodbUri: null };
const PRODUCTION = { mongodbUri: 'mongodb://db/chronicle' };

/** A unit that records its starts and stops, and can be made to end on its own or stop for good. */
function unit(calls: string[], name: string) {
  let ended: ((why: string) => void) | null = null;
  let stopForGood!: (error: Error) => void;
  let caughtUp!: () => void;
  const hosted: HostedProcessor & { isCaughtUp: boolean } = {
    start: jest.fn((onEnded: (why: string) => void) => {
      calls.push(`${name}.start`);
      ended = onEnded;
      return new Promise<void>((resolve) => (caughtUp = resolve));
    }),
    stop: jest.fn(() => {
      calls.push(`${name}.stop`);
      return Promise.resolve();
    }),
    isCaughtUp: false,
    position: null,
    failed: new Promise<Error>((resolve) => (stopForGood = resolve)),
  };
  return {
    hosted,
    end: (why: string) => ended!(why),
    stopForGood: (error: Error) => stopForGood(error),
    catchUp: () => {
      hosted.isCaughtUp = true;
      caughtUp();
    },
  };
}

function apiUnits(calls: string[]) {
  return {
    projections: unit(calls, 'projections'),
    worker: unit(calls, 'worker'),
    sessions: unit(calls, 'sessions'),
  };
}

function apiHost(
  config: { mongodbUri: string | null },
  units: ReturnType<typeof apiUnits>,
  logs: string[] = [],
) {
  return new ProcessorHost(
    config,
    'api',
    {
      'read-models': units.projections.hosted,
      'saga:password': units.worker.hosted,
      'account-sessions': units.sessions.hosted,
    },
    {
      startOnBootstrap: true,
      readiness: { 'read-models': 'readModels', 'account-sessions': 'sessions' },
      logger: { log: () => undefined, warn: () => undefined, error: (message) => logs.push(message) },
      restartDelayMs: 20,
      maxRestartDelayMs: 40,
    },
  );
}

const handlers = (registry: readonly ProcessorStatus[]) =>
  registry.map((status) => [status.handler, status.place]);

describe('ProcessorHost', () => {
  it('starts at bootstrap, at once, every unit placed here, and stops each at shutdown: the embedded default', async () => {
    const calls: string[] = [];
    const host = apiHost(EMBEDDED, apiUnits(calls));

    host.onApplicationBootstrap();
    expect(calls).toEqual(['projections.start', 'worker.start', 'sessions.start']);
    await host.onApplicationShutdown();

    expect(calls.slice(3).sort()).toEqual(['projections.stop', 'sessions.stop', 'worker.stop']);
    expect(handlers(host.registry)).toEqual([
      ['read-models', 'api'],
      ['saga:password', 'saga-worker'],
      ['account-sessions', 'api'],
    ]);
  });

  it('starts only the sessions in the API in production, yet stops every unit so that each releases its store', async () => {
    const calls: string[] = [];
    const host = apiHost(PRODUCTION, apiUnits(calls));

    host.onApplicationBootstrap();
    expect(calls).toEqual(['sessions.start']);
    await host.stop();

    expect(calls.slice(1).sort()).toEqual(['projections.stop', 'sessions.stop', 'worker.stop']);
    expect(handlers(host.registry)).toEqual([['account-sessions', 'api']]);
  });

  it('starts the projections and the saga in the projector when told, not at bootstrap', async () => {
    const calls: string[] = [];
    const units = apiUnits(calls);
    const host = new ProcessorHost(
      PRODUCTION,
      'projector',
      { 'read-models': units.projections.hosted, 'saga:password': units.worker.hosted },
      { startOnBootstrap: false },
    );

    host.onApplicationBootstrap();
    expect(calls).toEqual([]);
    void host.start();
    expect(calls).toEqual(['projections.start', 'worker.start']);
    await host.stop();
  });

  it('refuses a unit its process does not host', () => {
    const units = apiUnits([]);

    expect(
      () =>
        new ProcessorHost(
          EMBEDDED,
          'saga-worker',
          { 'read-models': units.projections.hosted },
          {
            startOnBootstrap: true,
          },
        ),
    ).toThrow('The saga-worker process hosts no read-models');
  });

  it('resolves its start once every unit has caught up, and starts once', async () => {
    const units = apiUnits([]);
    const host = apiHost(EMBEDDED, units);
    let caughtUp = false;

    const started = host.start().then(() => (caughtUp = true));
    units.projections.catchUp();
    units.sessions.catchUp();
    await new Promise(setImmediate);
    expect(caughtUp).toBe(false);
    units.worker.catchUp();
    await started;

    expect(caughtUp).toBe(true);
    expect(() => host.start()).toThrow('A processor host starts once');
    await host.stop();
  });

  it('starts a unit that ended on its own again after a back-off that doubles, and resets once it runs', async () => {
    const calls: string[] = [];
    const logs: string[] = [];
    const units = apiUnits(calls);
    const host = apiHost(EMBEDDED, units, logs);
    void host.start();
    const workerStarts = () => calls.filter((call) => call === 'worker.start').length;

    units.worker.end('The worker stopped (exit code 1)');
    units.worker.end('The worker stopped (exit code 1)');
    units.worker.end('The worker stopped (exit code 1)');
    expect(logs).toEqual([
      'The worker stopped (exit code 1); starting it again in 0.02 s',
      'The worker stopped (exit code 1); starting it again in 0.04 s',
      'The worker stopped (exit code 1); starting it again in 0.04 s',
    ]);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(workerStarts()).toBe(2);
    units.worker.catchUp();
    await new Promise(setImmediate);
    units.worker.end('The worker stopped (exit code 1)');
    expect(logs.at(-1)).toBe('The worker stopped (exit code 1); starting it again in 0.02 s');

    await host.stop();
    const startsAtStop = workerStarts();
    units.worker.end('The worker stopped (exit code 1)');
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(workerStarts()).toBe(startsAtStop);
    expect(logs).toHaveLength(4);
  });

  it('runs a job in every API process, on either deployment: once, listed until done, started again after a failure', async () => {
    for (const config of [EMBEDDED, PRODUCTION]) {
      const logs: string[] = [];
      const runs: Array<{ succeed(): void; fail(error: Error): void }> = [];
      const job = jest.fn(
        () => new Promise<void>((succeed, fail) => runs.push({ succeed: () => succeed(), fail })),
      );
      const host = new ProcessorHost(
        config,
        'api',
        {},
        {
          startOnBootstrap: true,
          jobs: { 'reservation-keys': job },
          logger: { log: () => undefined, warn: () => undefined, error: (message) => logs.push(message) },
          restartDelayMs: 20,
        },
      );
      const caughtUp = () => host.registry.map((status) => [status.handler, status.isCaughtUp]);

      host.onApplicationBootstrap();
      expect(job).toHaveBeenCalledTimes(1);
      expect(caughtUp()).toEqual([['reservation-keys', false]]);
      runs[0].fail(new Error('the event store is down'));
      await new Promise(setImmediate);
      expect(logs).toEqual([
        'The reservation-keys job failed: the event store is down; starting it again in 0.02 s',
      ]);
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(job).toHaveBeenCalledTimes(2);
      runs[1].succeed();
      await new Promise(setImmediate);

      expect(caughtUp()).toEqual([['reservation-keys', true]]);
      expect(readinessMet(host.registry[0])).toBe(true);
      await host.stop();
      expect(job).toHaveBeenCalledTimes(2);
    }
  });

  it('refuses a job its process does not run', () => {
    expect(
      () =>
        new ProcessorHost(
          PRODUCTION,
          'projector',
          {},
          { startOnBootstrap: false, jobs: { 'reservation-keys': () => Promise.resolve() } },
        ),
    ).toThrow('The projector process runs no reservation-keys');
  });

  it('stops each unit once, however often it is told to', async () => {
    const units = apiUnits([]);
    const host = apiHost(EMBEDDED, units);

    await Promise.all([host.stop(), host.stop(), host.onApplicationShutdown()]);

    for (const { hosted } of Object.values(units)) expect(hosted.stop).toHaveBeenCalledTimes(1);
  });

  it('says which unit stopped for good, in its registry and through `failed`', async () => {
    const units = apiUnits([]);
    const host = apiHost(EMBEDDED, units);
    const error = new Error('The events file is damaged');

    units.sessions.stopForGood(error);

    await expect(host.failed).resolves.toBe(error);
    expect(host.registry.map((status) => [status.handler, status.failure])).toEqual([
      ['read-models', null],
      ['saga:password', null],
      ['account-sessions', error],
    ]);
  });

  it('never reports a failure of a unit placed elsewhere', async () => {
    const units = apiUnits([]);
    const host = apiHost(PRODUCTION, units);
    let failed = false;
    void host.failed.then(() => (failed = true));

    units.projections.stopForGood(new Error('The events file is damaged'));
    await new Promise(setImmediate);

    expect(failed).toBe(false);
  });
});

describe('processorChecks', () => {
  /** Every check run, as readiness runs them: together. */
  const run = async (checks: ReturnType<typeof processorChecks>) =>
    Object.fromEntries(
      await Promise.all(Object.entries(checks).map(async ([key, check]) => [key, await check()])),
    );
  const status = (handler: BackgroundHandler, fields: Partial<ProcessorStatus> = {}): ProcessorStatus => ({
    handler,
    place: 'api',
    readiness: null,
    isCaughtUp: null,
    position: null,
    failure: null,
    ...fields,
  });

  it('checks what requests read, up once caught up, else down saying how far it is, asking the head once', async () => {
    const head = jest.fn(() => Promise.resolve(position(42n)));

    const checks = await run(
      processorChecks(
        [
          status('read-models', { readiness: 'readModels', isCaughtUp: false, position: position(7n) }),
          status('saga:password', { place: 'saga-worker' }),
          status('account-sessions', { readiness: 'sessions', isCaughtUp: false }),
        ],
        head,
      ),
    );

    expect(checks).toEqual({
      readModels: {
        status: 'down',
        message: 'catching up with the event history',
        position: '7',
        head: '42',
      },
      sessions: { status: 'down', message: 'catching up with the event history', position: null, head: '42' },
    });
    expect(head).toHaveBeenCalledTimes(1);
    expect(
      await run(
        processorChecks([status('account-sessions', { readiness: 'sessions', isCaughtUp: true })], head),
      ),
    ).toEqual({ sessions: { status: 'up' } });
  });

  it('finds readiness met, as /health/ready and the lifecycle read it, for what no request reads or what caught up', () => {
    expect(readinessMet(status('saga:password', { place: 'saga-worker' }))).toBe(true);
    expect(readinessMet(status('read-models', { readiness: 'readModels', isCaughtUp: true }))).toBe(true);
    expect(readinessMet(status('read-models', { readiness: 'readModels', isCaughtUp: false }))).toBe(false);
    expect(readinessMet(status('account-sessions', { readiness: 'sessions', isCaughtUp: null }))).toBe(false);
  });

  it('reports a handler that stopped for good, by its check or its name; a head that fails reads as unknown', async () => {
    const failure = new Error('The checkpoint of saga:password lies beyond the end of the event log');

    const checks = await run(
      processorChecks(
        [
          status('read-models', { readiness: 'readModels', isCaughtUp: false }),
          status('saga:password', { failure }),
          status('account-sessions', { readiness: 'sessions', failure: new Error('damaged') }),
        ],
        () => Promise.reject(new Error('unreachable')),
      ),
    );

    expect(checks).toEqual({
      readModels: {
        status: 'down',
        message: 'catching up with the event history',
        position: null,
        head: null,
      },
      'saga:password': { status: 'down', message: `stopped: ${failure.message}` },
      sessions: { status: 'down', message: 'stopped: damaged' },
    });
  });
});
