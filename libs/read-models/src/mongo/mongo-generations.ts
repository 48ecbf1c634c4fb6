import { randomUUID } from 'node:crypto';
import { type Collection, Db, MongoServerError } from 'mongodb';
import { CollectionName } from '../read-store.port';

/**
 * The MongoDB read models' generations: the one the live collections are (so that a wiped
 * database is noticed), and the promotion of a prefixed generation (a rebuild's) over the live
 * one, journalled so that a crash halfway is finished by the next connect.
 */

export interface CheckpointRecord {
  _id: string;
  commit: string;
  prepare: string;
}

/**
 * Beside the checkpoints: the read models' generation, made when they are created. A batch is
 * written only while it is the one this store started with, so a wiped database is noticed and
 * rebuilt from the start rather than given a checkpoint it does not hold the documents of.
 */
const GENERATION_ID = '#generation';
/** The collections a promotion renames over the live ones. */
export const DOCUMENT_COLLECTIONS = ['customers', 'users'] as const;
/** Where a promotion is journalled until every step is done (one at a time per database). */
const PROMOTIONS = 'promotions';
const PROMOTION_ID = 'promotion';
interface PromotionRecord {
  _id: string;
  prefix: string;
  /** The collections it renames over the live ones; absent (older journals): all of them. */
  collections?: CollectionName[];
}
const NAMESPACE_NOT_FOUND = 26;

/** The generation the read models are now, null when they have none. */
export async function generationOf(checkpoints: Collection<CheckpointRecord>): Promise<string | null> {
  return (await checkpoints.findOne({ _id: GENERATION_ID }))?.commit ?? null;
}

/** The generation the read models are now, made here if they have none (new, or wiped). */
export async function adoptGeneration(checkpoints: Collection<CheckpointRecord>): Promise<string | null> {
  await checkpoints.updateOne(
    { _id: GENERATION_ID },
    { $setOnInsert: { commit: randomUUID(), prepare: '' } },
    { upsert: true },
  );
  return generationOf(checkpoints);
}

/** Journals the promotion of the generation `prefix` names, then carries it out (see MongoReadStore.promote). */
export async function promoteGeneration(
  db: Db,
  prefix: string,
  collections: readonly CollectionName[],
): Promise<void> {
  await db
    .collection<PromotionRecord>(PROMOTIONS)
    .updateOne({ _id: PROMOTION_ID }, { $set: { prefix, collections: [...collections] } }, { upsert: true });
  await finishPromotion(db, prefix, collections);
}

/** A promotion a crash interrupted, finished. */
export async function finishPendingPromotion(db: Db): Promise<void> {
  const pending = await db.collection<PromotionRecord>(PROMOTIONS).findOne({ _id: PROMOTION_ID });
  if (pending) await finishPromotion(db, pending.prefix, pending.collections ?? DOCUMENT_COLLECTIONS);
}

/**
 * The steps of a journalled promotion, each skipped once done, so that running them again
 * finishes an interrupted one: per collection, copy the live indexes to the new generation and
 * rename it over the live one; then drop the generation's checkpoints and the journal entry. (The
 * driver takes a missing collection as dropped, also from servers before 7.0, which refuse it.)
 */
async function finishPromotion(
  db: Db,
  prefix: string,
  collections: readonly CollectionName[],
): Promise<void> {
  const existing = new Set((await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name));
  for (const name of DOCUMENT_COLLECTIONS) {
    const generation = `${prefix}${name}`;
    if (!existing.has(generation)) continue;
    if (!collections.includes(name)) {
      await db.dropCollection(generation);
      continue;
    }
    if (existing.has(name)) await copyIndexes(db.collection(name), db.collection(generation));
    try {
      await db.renameCollection(generation, name, { dropTarget: true });
    } catch (error) {
      // Another process finishing the same promotion renamed it first.
      if (!(error instanceof MongoServerError && error.code === NAMESPACE_NOT_FOUND)) throw error;
    }
  }
  await db.dropCollection(`${prefix}checkpoints`);
  await db.collection<PromotionRecord>(PROMOTIONS).deleteOne({ _id: PROMOTION_ID, prefix });
}

/** The live collection's secondary indexes (an operator's, say), created alike on the new one. */
async function copyIndexes(from: Collection, to: Collection): Promise<void> {
  for (const index of await from.indexes()) {
    if (index.name === '_id_') continue;
    const { key, v: _version, ns: _namespace, ...options } = index;
    await to.createIndex(key, options);
  }
}
