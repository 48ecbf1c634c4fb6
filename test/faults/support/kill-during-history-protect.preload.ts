// Preloaded (-r) into a CLI process running `history protect`: killed
// with SIGKILL at the point KILL_PROTECT_AT names, as a crash there would.
// - `before-commit`: every event rewritten and re-chained, the trigger restored, while the record
//   HistoryProtected.v1 is appended, before the transaction commits.
// - `after-commit`: the transaction committed, before the file is vacuumed.
import Database from 'better-sqlite3';
import { builtModule } from '../../support/built';

const { SqliteAppender } = builtModule<
  typeof import('../../../libs/event-store/src/embedded/sqlite-appender')
>('libs/event-store/src/embedded/sqlite-appender');

const at = process.env.KILL_PROTECT_AT;
const kill = (): never => {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
};

if (at === 'before-commit') {
  // The record of the rewrite is the one append made outside a group commit (flush): appends are
  // refused while the history is rewritten, so no group commit runs meanwhile.
  const appender = SqliteAppender.prototype as unknown as {
    appendOne(...args: unknown[]): unknown;
    flush(): void;
  };
  const { appendOne, flush } = appender;
  let flushing = false;
  appender.flush = function (this: unknown) {
    flushing = true;
    try {
      flush.call(this);
    } finally {
      flushing = false;
    }
  };
  appender.appendOne = function (this: unknown, ...args: unknown[]) {
    if (!flushing) kill();
    return appendOne.apply(this, args);
  };
} else if (at === 'after-commit') {
  const exec = Database.prototype.exec;
  Database.prototype.exec = function (this: Database.Database, source: string) {
    if (source === 'VACUUM') kill();
    return exec.call(this, source);
  };
}
