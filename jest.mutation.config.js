/**
 * Jest for Stryker (stryker.config.mjs): one project, not the multi-project file, as Stryker's
 * per-test coverage hooks the root config. The unit specs cover every library; the embedded
 * event store, the attempt counters and the memory read store also need their contract suites,
 * where most of their rules are tested.
 */
const [unit] = require('./jest.config.js').projects;

const { displayName: _name, testMatch, ...common } = unit;
const extra = {
  'event-store': [
    '<rootDir>/test/contract/event-store.embedded.spec.ts',
    '<rootDir>/test/contract/checkpoint-store.spec.ts',
    // The event processor's loop (batches, commits, retries, parking, resubscription) is tested
    // through the projection processor built on it (the sagas' and sessions' specs are slower).
    '<rootDir>/libs/read-models/src/projection-processor*.spec.ts',
  ],
  auth: ['<rootDir>/test/contract/attempt-counters.spec.ts'],
  'read-models': ['<rootDir>/test/contract/read-store.memory.spec.ts'],
};

/**
 * In the order they run under a mutant (test/mutation/unit-first-sequencer.js), the quickest to
 * fail first; a target's own list, then its extra suites above.
 *
 * Only the library's own specs: the read models and the event store are imported through their
 * index by specs all over the repository (43 import the event store), and jest's related-tests
 * search then loaded them, with their module graphs, for every mutant, to run none of their tests.
 */
const own = {
  'read-models': ['<rootDir>/libs/read-models/**/*.spec.ts'],
  'event-store': ['<rootDir>/libs/event-store/**/*.spec.ts'],
  // The API and the CLI import every use case: their suites would be loaded for each mutant.
  application: ['<rootDir>/libs/application/**/*.spec.ts'],
  // Their contract suites, each on the MongoDB wire double (the embedded adapters' halves are
  // skipped by coverage: no mutant of this target runs there), and the lease's own spec.
  mongo: [
    '<rootDir>/test/contract/{attempt-counters,checkpoint-store,data-key-store,idempotency-store}.spec.ts',
    '<rootDir>/test/contract/read-store.mongo{,-swap}.spec.ts',
    '<rootDir>/apps/projector/src/mongo-lease.spec.ts',
  ],
  // Its unit specs, the spec of the errors it makes a store outage, and its contract suites on the
  // gRPC double (the real server's halves are skipped without EVENTSTORE_URL).
  esdb: [
    '<rootDir>/libs/event-store/src/esdb/*.spec.ts',
    '<rootDir>/libs/event-store/src/store-unavailable.spec.ts',
    '<rootDir>/test/contract/event-store.esdb{,-server-behaviour}.spec.ts',
  ],
  // Its unit specs and the e2e suites of the edge itself (each boots the API in-process): the
  // others, about the use cases, would each be loaded and booted for every mutant they cover.
  http: [
    '<rootDir>/apps/api/src/http/*.spec.ts',
    '<rootDir>/test/e2e/{edge,edge-fuzz,openapi,metrics,tracing}.e2e.spec.ts',
  ],
};

/**
 * Below Stryker's own limit (1.5 times the tests' time, plus 5 s, plus the run's overhead): a
 * mutant that leaves a test waiting forever fails it here, instead of Stryker killing the runner
 * and starting another, which costs more than the wait on two shared cores.
 */
const timeouts = { 'read-models': 10_000 };

module.exports = {
  ...common,
  // Stryker's bail, which jest lacks: a mutant's run stops at its first failing test. Absolute:
  // Stryker loads the environment itself, before jest would expand <rootDir>.
  testEnvironment: `${__dirname}/test/mutation/bail-environment.js`,
  testSequencer: `${__dirname}/test/mutation/unit-first-sequencer.js`,
  testTimeout: timeouts[process.env.MUTATION_LIB] ?? 30_000,
  testMatch: [...(own[process.env.MUTATION_LIB] ?? testMatch), ...(extra[process.env.MUTATION_LIB] ?? [])],
};
