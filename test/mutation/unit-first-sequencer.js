const Sequencer = require('@jest/test-sequencer').default;
const { globsToMatcher, replacePathSepForGlob } = require('jest-util');

/**
 * The quickest specs first: in the order of the run's testMatch globs (jest.mutation.config.js
 * lists a target's own unit specs, then its contract and e2e suites, then the suites of other
 * libraries that also reach it), the smaller file first within each glob. With the bail
 * environment, a mutant a unit spec kills in milliseconds then skips the suites that would each
 * wait out a bound (jest's own order runs the slowest, or the last to fail, first).
 */
class UnitFirstSequencer extends Sequencer {
  sort(tests) {
    // One matcher per glob, built as jest builds its own from testMatch, once per config.
    const matchers = new Map();
    const matchersOf = (config) => {
      if (!matchers.has(config))
        matchers.set(
          config,
          config.testMatch.map((glob) => globsToMatcher([glob])),
        );
      return matchers.get(config);
    };
    const keyed = tests.map((test) => {
      const globs = matchersOf(test.context.config);
      const index = globs.findIndex((matches) => matches(replacePathSepForGlob(test.path)));
      const rank = index === -1 ? globs.length : index;
      return { test, rank, size: test.context.hasteFS.getSize(test.path) ?? 0 };
    });
    keyed.sort((a, b) => a.rank - b.rank || a.size - b.size);
    return keyed.map(({ test }) => test);
  }
}

module.exports = UnitFirstSequencer;
