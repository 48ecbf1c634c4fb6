import {
  customerRepresentation,
  CustomerRepresentation,
  USER_FIELD_NAMES,
  UserRepresentation,
} from '@chronicle/domain';
import { Position } from '@chronicle/event-store';

/** A customer as GET /customers shows it: its id, then its declared fields (CUSTOMER_FIELDS). */
export type CustomerDocument = CustomerRepresentation;

/**
 * A user's full representation, with `revision`: the user stream's revision of the last event
 * applied (the user's version, its ETag), so a reader can tell how far behind the stream it is.
 */
export type UserDocument = UserRepresentation & { revision: number };

/** A user document's members besides `id`, in order: the declared user fields, then `revision`. */
export const USER_DOCUMENT_FIELDS = [...USER_FIELD_NAMES, 'revision'] as const;

/** The user document members of `source` that hold a value, in order, and nothing else. */
export function userDocumentFields(source: Partial<UserDocument>): Partial<UserDocument> {
  const fields: Partial<Record<keyof UserDocument, unknown>> = {};
  for (const field of USER_DOCUMENT_FIELDS) if (source[field] !== undefined) fields[field] = source[field];
  return fields as Partial<UserDocument>;
}

export interface Collections {
  customers: { id: number; doc: CustomerDocument };
  users: { id: string; doc: UserDocument };
}
export type CollectionName = keyof Collections;

/**
 * Sets `set` on the document `id` (creating it when absent), or with `remove` deletes it (its
 * subject was erased), unless the document already carries a position at or after `position`: so
 * a replayed event never applies twice.
 */
export type DocumentChange = {
  [C in CollectionName]: {
    collection: C;
    id: Collections[C]['id'];
    position: Position;
  } & ({ set: Partial<Collections[C]['doc']>; remove?: never } | { remove: true; set?: never });
}[CollectionName];

export interface Checkpoint {
  projection: string;
  position: Position;
}

/** A page of a sorted list: skip `offset` documents, then take at most `limit`. */
export interface PageQuery {
  offset: number;
  limit: number;
}

export interface CustomerListQuery extends PageQuery {
  /** Exclusive lower bound on id. */
  gt?: number;
  /** Exclusive upper bound on id. */
  lt?: number;
}

export interface CustomerPage {
  items: CustomerDocument[];
  /** Customers matching gt/lt, ignoring offset and limit. */
  total: number;
}

/** A page of customers as the JSON array GET /customers sends, for stores that can write it directly. */
export interface CustomerPageJson {
  json: Buffer;
  /** Customers on the page. */
  count: number;
  /** Customers matching gt/lt, ignoring offset and limit. */
  total: number;
}

export interface UserPage {
  items: UserDocument[];
  total: number;
}

/** The read store port. Adapters: `memory/` (embedded default) and `mongo/`. */
export abstract class ReadStore {
  /** Applies the changes in order, then records the checkpoint; idempotent per document position. */
  abstract applyBatch(changes: DocumentChange[], checkpoint: Checkpoint): Promise<void>;

  abstract getCheckpoint(projection: string): Promise<Position | null>;

  /** Customers sorted by id ascending. */
  abstract listCustomers(query: CustomerListQuery): Promise<CustomerPage>;

  /** listCustomers' page as JSON; an adapter holding its documents as bytes can skip the objects. */
  async listCustomersJson(query: CustomerListQuery): Promise<CustomerPageJson> {
    const { items, total } = await this.listCustomers(query);
    // Field by field, so the body holds the document's own fields in its order and nothing else.
    const docs = items.map((item) => customerRepresentation(item));
    return { json: Buffer.from(JSON.stringify(docs), 'utf8'), count: items.length, total };
  }

  abstract getUser(id: string): Promise<UserDocument | null>;

  /** Users sorted by `createdon`, then id (compareDocumentIds); `total` counts them all. */
  abstract listUsers(query: PageQuery): Promise<UserPage>;

  /** Every document of a collection in id order (see compareDocumentIds): for verify. */
  abstract documents<C extends CollectionName>(collection: C): AsyncIterable<Collections[C]['doc']>;

  abstract ping(): Promise<void>;

  abstract close(): Promise<void>;
}

/** Document id order: numbers ascending, strings by their UTF-8 bytes (MongoDB's order for `_id`). */
export function compareDocumentIds<I extends number | string>(a: I, b: I): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return compareUtf8(String(a), String(b));
}

/**
 * Strings in the order of their UTF-8 bytes (code point order: MongoDB's order for strings),
 * without encoding them. UTF-16 units order differently only where a surrogate (D800–DFFF, a code
 * point above FFFF) meets a unit from E000 to FFFF: those two ranges swap.
 */
export function compareUtf8(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let at = 0; at < length; at++) {
    let x = a.charCodeAt(at);
    let y = b.charCodeAt(at);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}
