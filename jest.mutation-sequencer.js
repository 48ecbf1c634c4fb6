/**
 * For the mutation runs (jest.mutation.config.js): the smallest spec files first. Stryker stops a
 * mutant's run at its first failing file, and Jest's own order (slowest first) put the contract
 * suite ahead of the unit specs that kill most mutants within a second.
 */
const Sequencer = require('@jest/test-sequencer').default;
const { statSync } = require('node:fs');

class FastFirstSequencer extends Sequencer {
  sort(tests) {
    const size = (test) => statSync(test.path).size;
    return [...tests].sort((a, b) => size(a) - size(b) || a.path.localeCompare(b.path));
  }
}

module.exports = FastFirstSequencer;
