import { Position } from '@chronicle/event-store';

/** A customer as GET /customers shows it. */
export interface CustomerDocument {
  id: number;
  name: string;
  email: string;
  createdon: string;
}

/** A user's full representation. */
export interface UserDocument {
  id: string;
  name: string;
  age: number;
  createdon: string;
  modifiedon: string;
}

export interface Collections {
  customers: { id: number; doc: CustomerDocument };
  users: { id: string; doc: UserDocument };
}
export type CollectionName = keyof Collections;

/**
 * Sets `fields` on the document `id` (creating it when absent), unless the document already
 * carries a position at or after `position`: so a replayed event never applies twice.
 */
export type DocumentChange = {
  [C in CollectionName]: {
    collection: C;
    id: Collections[C]['id'];
    position: Position;
    set: Partial<Collections[C]['doc']>;
  };
}[CollectionName];

export interface Checkpoint {
  projection: string;
  position: Position;
}

export interface CustomerListQuery {
  /** Exclusive lower bound on id. */
  gt?: number;
  /** Exclusive upper bound on id. */
  lt?: number;
  offset: number;
  limit: number;
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
    const docs = items.map(({ id, name, email, createdon }) => ({ id, name, email, createdon }));
    return { json: Buffer.from(JSON.stringify(docs), 'utf8'), count: items.length, total };
  }

  abstract getUser(id: string): Promise<UserDocument | null>;

  /** Every document of a collection in id order (see compareDocumentIds): for verify. */
  abstract documents<C extends CollectionName>(collection: C): AsyncIterable<Collections[C]['doc']>;

  abstract ping(): Promise<void>;

  abstract close(): Promise<void>;
}

/** Document id order: numbers ascending, strings by their UTF-8 bytes (MongoDB's order for `_id`). */
export function compareDocumentIds<I extends number | string>(a: I, b: I): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return Buffer.compare(Buffer.from(String(a), 'utf8'), Buffer.from(String(b), 'utf8'));
}
