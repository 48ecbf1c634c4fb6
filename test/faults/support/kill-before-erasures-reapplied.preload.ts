// Preloaded (-r) into a CLI `restore`: once the backup's files are in
// DATA_DIR, re-applying the erasure log kills the process with SIGKILL before it erases anyone, as
// a crash (or power loss) between the copy and the re-application would.
import { builtModule } from '../../support/built';

const { ReapplyErasuresHandler } = builtModule<
  typeof import('../../../libs/application/src/personal-data/reapply-erasures/reapply-erasures.handler')
>('libs/application/src/personal-data/reapply-erasures/reapply-erasures.handler');

ReapplyErasuresHandler.prototype.execute = function () {
  process.kill(process.pid, 'SIGKILL');
  return new Promise<never>(() => undefined);
};
