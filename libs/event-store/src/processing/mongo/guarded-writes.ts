import { MongoBulkWriteError, type WriteError } from 'mongodb';

/** MongoDB's code for a unique index violation. */
export const DUPLICATE_KEY = 11000;
const ID_INDEX_MESSAGE = / index: _id_ dup key: /;

/**
 * Of an unordered bulk write of guarded upserts (a filter on `_id` and a position the document
 * must not be past), the indexes of the writes refused with a duplicate `_id`: the guard did not
 * match an existing, newer document. Rethrows any other failure. The driver keeps only code and
 * message of a bulk write error, so the index is read from the server's message
 * ("E11000 duplicate key error collection: db.customers index: _id_ dup key: ...").
 */
export function duplicateIdWrites(error: unknown): number[] {
  if (!(error instanceof MongoBulkWriteError) || error.result.getWriteConcernError()) throw error;
  // One WriteError or several, depending on how many writes failed.
  const writeErrors = ([] as WriteError[]).concat(error.writeErrors);
  if (writeErrors.length === 0) throw error;
  return writeErrors.map((writeError) => {
    if (writeError.code !== DUPLICATE_KEY || !ID_INDEX_MESSAGE.test(writeError.errmsg ?? '')) throw error;
    return writeError.index;
  });
}
