// @ts-check
const { TestEnvironment } = require('jest-environment-node');

/** Stryker names the mutant under test in this variable for the length of its run. */
const ACTIVE_MUTANT = '__STRYKER_ACTIVE_MUTANT__';

/** The mutant a test has failed under; shared by the test files of a run (Stryker runs jest in band). */
let failedUnder = null;

/**
 * Stryker stops testing a mutant at its first failing test, but cannot make jest do so
 * (jestjs/jest#11766). Without that, a mutant that leaves one wait unanswered makes every later
 * test covering it wait out its bound too, and the run ends as a timeout instead of a kill. Here,
 * once a test or hook has failed under a mutant, the tests after it are skipped. Never in the dry
 * run, where no mutant is active and a failure ends the run anyway.
 */
class BailEnvironment extends TestEnvironment {
  /** @param {{ name: string; test?: { mode?: string } }} event */
  async handleTestEvent(event) {
    const mutant = process.env[ACTIVE_MUTANT];
    if (mutant === undefined) return;
    if (event.name === 'test_fn_failure' || event.name === 'hook_failure') failedUnder = mutant;
    else if (event.name === 'test_start' && event.test && failedUnder === mutant) event.test.mode = 'skip';
  }
}

module.exports = BailEnvironment;
