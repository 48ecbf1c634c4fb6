/**
 * Jest for Stryker (stryker.config.mjs): one project, not the multi-project file, as Stryker's
 * per-test coverage hooks the root config. The unit specs cover every library; the embedded
 * event store and the attempt counters also need their contract suites, where most of their rules
 * are tested.
 */
const [unit] = require('./jest.config.js').projects;

const { displayName: _name, testMatch, ...common } = unit;
const extra = {
  'event-store': ['<rootDir>/test/contract/event-store.embedded.spec.ts'],
  auth: ['<rootDir>/test/contract/attempt-counters.spec.ts'],
};

module.exports = {
  ...common,
  testTimeout: 30_000,
  testSequencer: '<rootDir>/jest.mutation-sequencer.js',
  testMatch: [...testMatch, ...(extra[process.env.MUTATION_LIB] ?? [])],
};
