import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** Commits of the connection between two checkpoints asked of the worker. */
export const COMMITS_PER_CHECKPOINT = 64;
/**
 * Pages of write-ahead log past which the connection checkpoints on its own again, as SQLite does
 * by default at 1,000: the worker fell behind, or is gone.
 */
export const BACKSTOP_PAGES = 10_000;

/**
 * The worker: its own connection to the database, a PASSIVE checkpoint each time it is asked
 * (one that waits for no reader or writer, and copies what it can), closed when told to stop.
 * Plain JavaScript, evaluated: the same from the sources and from the build.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
parentPort.on('message', (message) => {
  if (message === 'stop') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or failed: the next one tries again, and the connection's own are the backstop.
  }
});
`;

/**
 * Checkpoints of a WAL database taken by a worker thread instead of by the commits of its
 * connection. A checkpoint writes the log back into the database and fsyncs both: run by a commit
 * on the main thread (SQLite's automatic checkpoint, every 1,000 pages), it held up every request
 * meanwhile. For idempotency.db, where every key writes pages at random, a key held the event loop
 * 124 µs with them and 102 µs without (bench/tools/idempotency-key-cost.ts, one key per turn; 111
 * and 82 µs with four). The connection's own checkpoints stay, past BACKSTOP_PAGES.
 */
export class BackgroundCheckpoints {
  private commits = 0;
  private readonly exited: Promise<void>;

  private constructor(private readonly worker: Worker) {
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    // A worker that failed leaves the checkpoints to the connection.
    worker.on('error', () => undefined);
    // It never keeps the process alive on its own.
    worker.unref();
  }

  /** Starts the worker for `db` (a WAL database on disk, opened by this thread). */
  static start(db: Database.Database): BackgroundCheckpoints {
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    return new BackgroundCheckpoints(
      new Worker(WORKER, {
        eval: true,
        workerData: { driver: require.resolve('better-sqlite3'), path: db.name },
        // It allocates next to nothing: V8's default young generation would cost the process MiBs.
        resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
      }),
    );
  }

  /** Called after each commit of the connection: every COMMITS_PER_CHECKPOINT, a checkpoint. */
  committed(): void {
    this.commits += 1;
    if (this.commits % COMMITS_PER_CHECKPOINT === 0) this.worker.postMessage('checkpoint');
  }

  /** Closes the worker's connection, before the connection's own: the last one out deletes the log. */
  stop(): Promise<void> {
    // Kept alive until the worker is out: what follows the stop (the last commits, the close) must run.
    this.worker.ref();
    this.worker.postMessage('stop');
    return this.exited;
  }
}
