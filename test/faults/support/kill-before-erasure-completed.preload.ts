// Preloaded (-r) into an API process: an erasure whose SubjectErased.v1
// is committed kills the process with SIGKILL before anything follows it (the person's e-mails,
// the account's closing, the key's destruction), as a crash right after the commit point would.
import { builtModule } from '../../support/built';

const { ErasureCompletion } = builtModule<
  typeof import('../../../libs/application/src/personal-data/complete-erasure/erasure-completion')
>('libs/application/src/personal-data/complete-erasure/erasure-completion');

ErasureCompletion.prototype.complete = function () {
  process.kill(process.pid, 'SIGKILL');
  return new Promise<void>(() => undefined);
};
