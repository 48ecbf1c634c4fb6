const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

/**
 * The quickest specs first: the unit specs beside the code, then the contract and e2e suites under
 * test/, the smaller file first within each. With the bail environment, a mutant a unit spec
 * kills in milliseconds then skips the suites that would each wait out a bound (jest's own order
 * runs the slowest, or the last to fail, first).
 */
class UnitFirstSequencer extends Sequencer {
  sort(tests) {
    const suites = (test) =>
      path.relative(test.context.config.rootDir, test.path).startsWith(`test${path.sep}`);
    const rank = (test) => (suites(test) ? 1 : 0);
    const size = (test) => test.context.hasteFS.getSize(test.path) ?? 0;
    return [...tests].sort((a, b) => rank(a) - rank(b) || size(a) - size(b));
  }
}

module.exports = UnitFirstSequencer;
