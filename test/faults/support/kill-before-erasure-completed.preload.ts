// Preloaded (-r, after @swc-node/register) into an API process: an erasure whose SubjectErased.v1
// is committed kills the process with SIGKILL before anything follows it (the person's e-mails,
// the account's closing, the key's destruction), as a crash right after the commit point would.
import { ErasureCompletion } from '../../../libs/application/src/personal-data/complete-erasure/erasure-completion';

ErasureCompletion.prototype.complete = function () {
  process.kill(process.pid, 'SIGKILL');
  return new Promise<void>(() => undefined);
};
