import {
  CancelledError,
  DeadlineExceededError,
  NotLeaderError,
  UnavailableError,
} from '@eventstore/db-client';
import {
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerSelectionError,
  MongoWriteConcernError,
} from 'mongodb';

/** SQLite's codes for a store that cannot be used now: a full disk, I/O, a lock held too long, a lost file. */
const SQLITE_UNAVAILABLE = /^SQLITE_(FULL|IOERR|BUSY|LOCKED|READONLY|CANTOPEN|CORRUPT|NOTADB)/;

/**
 * Whether `error` says a store (the event store, the read store, the checkpoints) is down, frozen
 * or out of space, rather than that the request was wrong: the answer is then a 503 that asks the
 * client to come back, not a 500.
 */
export function isStoreUnavailable(error: unknown): boolean {
  if (
    error instanceof UnavailableError ||
    error instanceof DeadlineExceededError ||
    error instanceof NotLeaderError ||
    error instanceof CancelledError ||
    error instanceof MongoNetworkError ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoOperationTimeoutError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoWriteConcernError
  ) {
    return true;
  }
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && SQLITE_UNAVAILABLE.test(code);
}

/** Whether `error` says the store's file is damaged: retrying cannot help, the process stops and says so. */
export function isStoreDamaged(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^SQLITE_(CORRUPT|NOTADB)/.test(code);
}
