// Preloaded (-r) into a CLI process running `history protect --to`:
// killed with SIGKILL once KILL_COPY_AFTER_APPENDS appends to EventStoreDB have been answered, as
// a crash in the middle of the copy would end it.
import { builtModule } from '../../support/built';

type Source = typeof import('../../../libs/event-store/src/esdb/esdb-event-store');
type EsdbEventStore = InstanceType<Source['EsdbEventStore']>;
const { EsdbEventStore } = builtModule<Source>('libs/event-store/src/esdb/esdb-event-store');

const after = Number(process.env.KILL_COPY_AFTER_APPENDS);
let appends = 0;
const append = EsdbEventStore.prototype.append;
EsdbEventStore.prototype.append = async function (this: EsdbEventStore, ...args: Parameters<typeof append>) {
  const result = await append.apply(this, args);
  if (++appends === after) process.kill(process.pid, 'SIGKILL');
  return result;
};
