// Preloaded (-r, after @swc-node/register) into a CLI process running `history protect`: killed
// with SIGKILL at the point KILL_PROTECT_AT names, as a crash there would.
// - `before-commit`: every event rewritten and re-chained, the trigger restored, while the record
//   HistoryProtected.v1 is appended, before the transaction commits.
// - `after-commit`: the transaction committed, before the file is vacuumed.
import Database from 'better-sqlite3';
import { SqliteEventStore } from '../../../libs/event-store/src/embedded/sqlite-event-store';

const at = process.env.KILL_PROTECT_AT;
const kill = (): never => {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
};

if (at === 'before-commit') {
  const store = SqliteEventStore.prototype as unknown as { appendOne(...args: unknown[]): unknown };
  const appendOne = store.appendOne;
  store.appendOne = function (this: { rewriting: boolean }, ...args: unknown[]) {
    if (this.rewriting) kill();
    return appendOne.apply(this, args);
  };
} else if (at === 'after-commit') {
  const exec = Database.prototype.exec;
  Database.prototype.exec = function (this: Database.Database, source: string) {
    if (source === 'VACUUM') kill();
    return exec.call(this, source);
  };
}
