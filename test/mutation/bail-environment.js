const { TestEnvironment } = require('jest-environment-node');

/** Stryker names the mutant under test in this variable for the length of its run. */
const ACTIVE_MUTANT = '__STRYKER_ACTIVE_MUTANT__';

/** The mutant a test has failed under; shared by the test files of a run (Stryker runs jest in band). */
let failedUnder = null;

/**
 * Stryker stops testing a mutant at its first failing test, but cannot make jest do so
 * (jestjs/jest#11766). Without that, a mutant that leaves one wait unanswered makes every later
 * test covering it wait out its bound too, and the run ends as a timeout instead of a kill. Here,
 * once a test or hook has failed under a mutant, the file's later tests are skipped, and the later
 * files are skipped whole, their hooks too. A test that carries a failed `beforeAll`'s error still
 * runs, so that the failure is reported: a skipped test counts for nothing. Never in the dry run,
 * where no mutant is active.
 */
class BailEnvironment extends TestEnvironment {
  /** Whether the failure was in this file: its other tests are skipped, not its describe blocks. */
  failedHere = false;

  /** @param {{ name: string; test?: { mode?: string; errors: unknown[] }; describeBlock?: { mode?: string } }} event */
  async handleTestEvent(event) {
    const mutant = process.env[ACTIVE_MUTANT];
    if (mutant === undefined) return;
    if ((event.name === 'test_done' && event.test.errors.length > 0) || event.name === 'hook_failure') {
      failedUnder = mutant;
      this.failedHere = true;
    } else if (failedUnder !== mutant) {
      return;
    } else if (event.name === 'run_describe_start' && !this.failedHere) {
      event.describeBlock.mode = 'skip';
    } else if (event.name === 'test_start' && event.test.errors.length === 0) {
      event.test.mode = 'skip';
    }
  }
}

module.exports = BailEnvironment;
