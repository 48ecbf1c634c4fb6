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

/** The read store port. Adapters: `memory/` (embedded default) and `mongo/`. */
export abstract class ReadStore {
  /** Applies the changes in order, then records the checkpoint; idempotent per document position. */
  abstract applyBatch(changes: DocumentChange[], checkpoint: Checkpoint): Promise<void>;

  abstract getCheckpoint(projection: string): Promise<Position | null>;

  /** Customers sorted by id ascending. */
  abstract listCustomers(query: CustomerListQuery): Promise<CustomerPage>;

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
