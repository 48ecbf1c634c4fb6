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
    const ranks = new Map();
    const rank = (test) => {
      const globs = test.context.config.testMatch;
      let found = ranks.get(test.path);
      if (found === undefined) {
        // One matcher per glob, built as jest builds its own from testMatch.
        const index = globs.findIndex((glob) => globsToMatcher([glob])(replacePathSepForGlob(test.path)));
        found = index === -1 ? globs.length : index;
        ranks.set(test.path, found);
      }
      return found;
    };
    const size = (test) => test.context.hasteFS.getSize(test.path) ?? 0;
    return [...tests].sort((a, b) => rank(a) - rank(b) || size(a) - size(b));
  }
}

module.exports = UnitFirstSequencer;
