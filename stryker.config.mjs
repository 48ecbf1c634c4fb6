// @ts-check
// Mutation testing, one target per run: MUTATION_LIB=<name> stryker run (npm run test:mutation runs them all).
/** Per library, the files mutated; jest.mutation.config.js picks the specs that may kill them. */
const MUTATE = {
  domain: ['libs/domain/src/**/*.ts'],
  // All of it but the MongoDB attempt counters, tested against the wire double in the contract suite.
  auth: ['libs/auth/src/**/*.ts', '!libs/auth/src/attempt-counters/mongo-*.ts'],
  // The embedded adapter and the port: the EventStoreDB adapter and the MongoDB checkpoint and data
  // key stores are tested against doubles (contract and e2e-doubles suites), in their own targets.
  'event-store': [
    'libs/event-store/src/**/*.ts',
    '!libs/event-store/src/esdb/**',
    '!libs/event-store/src/processing/mongo/**',
    '!libs/event-store/src/personal-data/mongo-*.ts',
  ],
  // The MongoDB adapter, like the EventStoreDB one, is tested against a double in the contract suite.
  'read-models': ['libs/read-models/src/**/*.ts', '!libs/read-models/src/mongo/**'],
  // The use cases (issue 34): their handlers, sagas and the repository, against their own specs.
  application: ['libs/application/src/**/*.ts'],
  // The MongoDB adapters (issue 34), against their contract suites on the wire double.
  mongo: [
    'libs/read-models/src/mongo/**/*.ts',
    'libs/event-store/src/processing/mongo/**/*.ts',
    'libs/event-store/src/personal-data/mongo-data-key-store.ts',
    'libs/auth/src/attempt-counters/mongo-attempt-counters.ts',
    'apps/api/src/idempotency/mongo-idempotency-store.ts',
    'apps/projector/src/mongo-lease.ts',
  ],
  // The EventStoreDB adapter (issue 34), against its contract suites on the gRPC double.
  esdb: ['libs/event-store/src/esdb/**/*.ts'],
  // The HTTP edge (issue 34): its unit specs and the API's e2e suites about the edge itself.
  http: ['apps/api/src/http/**/*.ts'],
};
/**
 * A mutant is type-checked against what its target imports, not the whole project: against all of
 * it, the checker of read-models took more CPU than its tests.
 */
const TSCONFIG = {
  'read-models': 'libs/read-models/tsconfig.mutation.json',
  mongo: 'tsconfig.mutation-mongo.json',
  esdb: 'tsconfig.mutation-esdb.json',
  http: 'tsconfig.mutation-http.json',
};

const name = process.env.MUTATION_LIB ?? '';
const mutate = MUTATE[/** @type {keyof typeof MUTATE} */ (name)];
if (!mutate) throw new Error(`MUTATION_LIB must be one of ${Object.keys(MUTATE).join(', ')}, not "${name}"`);
/**
 * MUTATION_REPORT=<lib>-partial/<part>: a run of part of a library (with --mutate) reports there,
 * with its own sandbox and incremental file, so runs on two parts can go at once.
 */
const report = process.env.MUTATION_REPORT ?? name;
if (!/^[a-z-]+(\/[a-z-]+)?$/.test(report))
  throw new Error(`MUTATION_REPORT "${report}" is not <lib> or <lib>-partial/<part>`);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'jest',
  jest: {
    projectType: 'custom',
    configFile: 'jest.mutation.config.js',
    enableFindRelatedTests: true,
  },
  checkers: ['typescript'],
  tsconfigFile: TSCONFIG[/** @type {keyof typeof TSCONFIG} */ (name)] ?? 'tsconfig.json',
  coverageAnalysis: 'perTest',
  // A static mutant (a module-level constant or schema) needs a fresh load and every test: in
  // libs/domain, 13% of the mutants took 97% of the run. Ignored (so not in the score) to stay short.
  ignoreStatic: true,
  mutate: [...mutate, '!**/*.spec.ts', '!**/*.spec-helper.ts', '!**/index.ts'],
  ignorePatterns: ['dist', 'coverage', 'reports', 'bench/.work', 'data', '.stryker-tmp*'],
  // Two cores shared with the rest of the machine.
  concurrency: Number(process.env.MUTATION_CONCURRENCY ?? 2),
  // A mutant that breaks a wake-up leaves its test waiting: each timeout costs this much plus a
  // restart of the runner. Added to 1.5 times the covering tests' own time, measured in the dry
  // run; 3 s (default 5 s) is still far above the jitter of a loaded machine.
  timeoutMS: 3000,
  incremental: true,
  incrementalFile: `reports/mutation/${report}.incremental.json`,
  reporters: ['json', 'clear-text', 'progress'],
  jsonReporter: { fileName: `reports/mutation/${report}.json` },
  thresholds: { high: 90, low: 85, break: null },
  tempDirName: report === name ? '.stryker-tmp' : `.stryker-tmp-${report.replace('/', '-')}`,
};
