import { BACKGROUND_HANDLERS, HOSTED_BY, ProcessorPlace, processorPlacement } from './processor-placement';

/** The deployments: the embedded default, and each store set on its own or both (production). */
const CONFIGURATIONS = {
  'embedded default': { mongodbUri: null, eventStoreUrl: null },
  'EVENTSTORE_URL only': { mongodbUri: null, eventStoreUrl: 'esdb://es:2113' },
  'MONGODB_URI only': { mongodbUri: 'mongodb://db/chronicle', eventStoreUrl: null },
  'EVENTSTORE_URL and MONGODB_URI': { mongodbUri: 'mongodb://db/chronicle', eventStoreUrl: 'esdb://es:2113' },
};

describe('processorPlacement', () => {
  it.each(Object.entries(CONFIGURATIONS))('places every background handler for the %s', (name, config) => {
    const inMemory = config.mongodbUri === null;

    expect(processorPlacement(config)).toEqual({
      // The in-memory read models are the API's own; shared ones are built by the projector.
      'read-models': inMemory ? 'api' : 'projector',
      // Once per deployment: the API's worker thread, or the lease-holding projector.
      'saga:password': inMemory ? 'saga-worker' : 'projector',
      // Every API process checks its requests against its own sessions.
      'account-sessions': 'api',
    });
    expect(Object.keys(processorPlacement(config))).toEqual([...BACKGROUND_HANDLERS]);
  });

  it.each(Object.entries(CONFIGURATIONS))(
    'starts each handler in exactly one process for the %s',
    (name, config) => {
      const placement = processorPlacement(config);
      // The worker thread runs inside the API: the API's unit for it starts the thread.
      const processes: ProcessorPlace[] = ['api', 'projector'];
      for (const handler of BACKGROUND_HANDLERS) {
        const starters = processes.filter((process) => HOSTED_BY[process][handler] === placement[handler]);
        expect([handler, starters]).toEqual([handler, [expect.any(String)]]);
      }
    },
  );

  it('runs in the worker thread exactly what the API starts the thread for', () => {
    const inWorker = (hosted: (typeof HOSTED_BY)[ProcessorPlace]) =>
      Object.entries(hosted)
        .filter(([, place]) => place === 'saga-worker')
        .map(([handler]) => handler);

    expect(inWorker(HOSTED_BY['saga-worker'])).toEqual(inWorker(HOSTED_BY.api));
    expect(Object.keys(HOSTED_BY['saga-worker'])).toEqual(inWorker(HOSTED_BY.api));
  });
});
