// Preloaded (-r) into an API process: each append to an e-mail
// reservation stream waits SLOW_RESERVATIONS_MS first, as on a slow disk, so that a fault test
// can kill the process in the middle of keying the reservation streams.
import { builtModule } from '../../support/built';

type Source = typeof import('../../../libs/event-store/src/embedded/sqlite-event-store');
type SqliteEventStore = Source['SqliteEventStore']['prototype'];
const { SqliteEventStore } = builtModule<Source>('libs/event-store/src/embedded/sqlite-event-store');

const delayMs = Number(process.env.SLOW_RESERVATIONS_MS ?? '0');
const append = SqliteEventStore.prototype.append;

SqliteEventStore.prototype.append = async function (this: SqliteEventStore, stream, events, expected) {
  if (stream.startsWith('email-')) await new Promise((resolve) => setTimeout(resolve, delayMs));
  return append.call(this, stream, events, expected);
};
