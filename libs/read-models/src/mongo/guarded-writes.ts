import { comparePositions, Position, positionKey } from '@chronicle/event-store';
import { Long } from 'mongodb';
import { CollectionName, DocumentChange } from '../read-store.port';

// The writes a batch of document changes becomes: each guarded by the position it was made at,
// so that applying a change again (a replay, a second projector) changes nothing.

const INT32_MAX = 2 ** 31 - 1;
const INT32_MIN = -(2 ** 31);

/** One document's changes of a batch, in order, each at a later position than the one before. */
export interface DocumentChanges {
  collection: CollectionName;
  id: number | string;
  /** Where the batch deletes the document (its subject was erased), before its `changes`. */
  removedAt: Position | null;
  changes: SetChange[];
}

type SetChange = DocumentChange & { set: object };

export interface GuardedDelete {
  deleteOne: { filter: { _id: number | string | Long; pos: { $lt: string } } };
}

export interface GuardedUpsert {
  updateOne: {
    filter: { _id: number | string | Long; pos: { $lt: string } };
    update: { $set: Record<string, unknown> };
    upsert: true;
  };
}

/**
 * Groups a batch's changes by document, keeping their order and dropping any change at or before
 * the position of an earlier change to the same document: applied in order, it would be refused.
 */
export function groupByDocument(changes: DocumentChange[]): DocumentChanges[] {
  const documents = new Map<string, DocumentChanges>();
  for (const change of changes) {
    const key = `${change.collection}:${typeof change.id}:${change.id}`;
    let doc = documents.get(key);
    if (!doc) {
      doc = { collection: change.collection, id: change.id, removedAt: null, changes: [] };
      documents.set(key, doc);
    }
    const last = doc.changes.at(-1)?.position ?? doc.removedAt;
    if (last !== null && comparePositions(change.position, last) <= 0) continue;
    if (change.remove) {
      // What the batch set before the deletion is deleted with it.
      doc.removedAt = change.position;
      doc.changes = [];
    } else {
      doc.changes.push(change);
    }
  }
  return [...documents.values()];
}

function storedId(doc: DocumentChanges): number | string | Long {
  // Customer ids beyond int32 are stored as int64, not double: an integer id stays an integer.
  if (typeof doc.id === 'number' && (doc.id > INT32_MAX || doc.id < INT32_MIN))
    return Long.fromNumber(doc.id);
  return doc.id;
}

function fieldsOf(change: SetChange): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(change.set)) {
    if (field !== 'id' && value !== undefined) fields[field] = value;
  }
  return fields;
}

function upsert(doc: DocumentChanges, guard: Position, fields: Record<string, unknown>, last: Position) {
  return {
    collection: doc.collection,
    op: {
      updateOne: {
        filter: { _id: storedId(doc), pos: { $lt: positionKey(guard) } },
        update: { $set: { ...fields, pos: positionKey(last) } },
        upsert: true,
      },
    } satisfies GuardedUpsert,
  };
}

export function guardedDelete(doc: DocumentChanges) {
  return {
    collection: doc.collection,
    op: {
      deleteOne: { filter: { _id: storedId(doc), pos: { $lt: positionKey(doc.removedAt!) } } },
    } satisfies GuardedDelete,
  };
}

export function mergedWrite(doc: DocumentChanges) {
  const fields = Object.assign({}, ...doc.changes.map(fieldsOf)) as Record<string, unknown>;
  return upsert(doc, doc.changes[0].position, fields, doc.changes.at(-1)!.position);
}

export function guardedWrite(doc: DocumentChanges, at: number) {
  const change = doc.changes[at];
  return upsert(doc, change.position, fieldsOf(change), change.position);
}
