import { isDeepStrictEqual } from 'node:util';
import { CollectionName, Collections, compareDocumentIds, ReadStore } from '../read-store.port';

export interface Difference {
  collection: CollectionName;
  id: number | string;
  /** The live document, null when the live models lack it. */
  live: unknown;
  /** The document a replay gives, null when the replay has none. */
  rebuilt: unknown;
}

export interface Comparison {
  /** Documents looked at, counting each id once. */
  documents: number;
  differences: Difference[];
}

const COLLECTIONS: readonly CollectionName[] = ['customers', 'users'];

/** Walks both stores' collections in id order side by side: one pass, no lookups. */
export async function compareReadModels(live: ReadStore, rebuilt: ReadStore): Promise<Comparison> {
  let documents = 0;
  const differences: Difference[] = [];
  for (const collection of COLLECTIONS) {
    const left = live.documents(collection)[Symbol.asyncIterator]();
    const right = rebuilt.documents(collection)[Symbol.asyncIterator]();
    let a = await left.next();
    let b = await right.next();
    while (!a.done || !b.done) {
      documents++;
      const order = a.done ? 1 : b.done ? -1 : compareDocumentIds(a.value.id, b.value.id);
      if (order < 0 && !a.done) {
        differences.push({ collection, id: a.value.id, live: a.value, rebuilt: null });
        a = await left.next();
      } else if (order > 0 && !b.done) {
        differences.push({ collection, id: b.value.id, live: null, rebuilt: b.value });
        b = await right.next();
      } else if (!a.done && !b.done) {
        if (!isDeepStrictEqual(a.value, b.value)) {
          differences.push({ collection, id: a.value.id, live: a.value, rebuilt: b.value });
        }
        a = await left.next();
        b = await right.next();
      }
    }
  }
  return { documents, differences };
}

/** One document as the store shows it now, or null. */
export async function readDocument(store: ReadStore, collection: CollectionName, id: number | string) {
  if (collection === 'users') return store.getUser(id as string);
  const page = await store.listCustomers({
    gt: (id as number) - 1,
    lt: (id as number) + 1,
    offset: 0,
    limit: 1,
  });
  return (page.items[0] as Collections['customers']['doc'] | undefined) ?? null;
}

/** The differences that remain when both documents are read again. */
export async function recheck(
  live: ReadStore,
  rebuilt: ReadStore,
  differences: Difference[],
): Promise<Difference[]> {
  const remaining: Difference[] = [];
  for (const difference of differences) {
    const [now, replayed] = await Promise.all([
      readDocument(live, difference.collection, difference.id),
      readDocument(rebuilt, difference.collection, difference.id),
    ]);
    if (!isDeepStrictEqual(now, replayed)) remaining.push({ ...difference, live: now, rebuilt: replayed });
  }
  return remaining;
}
