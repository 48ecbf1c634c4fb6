import { setImmediate as nextTurn } from 'node:timers/promises';
import { comparePositions, Position } from '@chronicle/event-store';
import {
  Checkpoint,
  CustomerDocument,
  CustomerListQuery,
  CollectionName,
  Collections,
  compareDocumentIds,
  CustomerPage,
  CustomerPageJson,
  DocumentChange,
  PageQuery,
  ReadStore,
  UserDocument,
  userDocumentFields,
  UserPage,
} from '../read-store.port';
import { withUserChange } from '../projections/users.projection';
import { validateChanges, validateListQuery, validatePosition } from '../read-store-validation';
import { CustomerColumns } from './customer-columns';
import { UserOrder } from './user-order';

interface StoredUser {
  doc: Partial<UserDocument>;
  position: Position;
}

/** Documents documents() yields between two turns of the event loop. */
const YIELD_EVERY = 10_000;

/**
 * The embedded default read store: everything in process memory, rebuilt from the event store at
 * start-up. Customers live in sorted columns (see CustomerColumns), users in a Map.
 */
export class MemoryReadStore extends ReadStore {
  private customers = new CustomerColumns();
  private users = new Map<string, StoredUser>();
  private userOrder = new UserOrder();
  private readonly checkpoints = new Map<string, Position>();
  private closed = false;

  applyBatch(changes: DocumentChange[], checkpoint: Checkpoint): Promise<void> {
    return settle(() => {
      this.assertOpen();
      // Everything is checked before anything is applied, so a bad batch changes nothing.
      validateChanges(changes);
      validatePosition(checkpoint.position, 'checkpoint position');
      for (const change of changes) {
        if (change.collection === 'customers') this.customers.apply(change.id, change.position, change.set);
        else this.applyUser(change.id, change.position, change.set);
      }
      this.checkpoints.set(checkpoint.projection, copyPosition(checkpoint.position));
    });
  }

  getCheckpoint(projection: string): Promise<Position | null> {
    return settle(() => {
      this.assertOpen();
      const stored = this.checkpoints.get(projection);
      return stored === undefined ? null : copyPosition(stored);
    });
  }

  listCustomers(query: CustomerListQuery): Promise<CustomerPage> {
    return settle(() => {
      const { start, end, total } = this.pageRows(query);
      const items: CustomerDocument[] = [];
      for (let index = start; index < end; index++) items.push(this.customers.read(index));
      return { items, total };
    });
  }

  override listCustomersJson(query: CustomerListQuery): Promise<CustomerPageJson> {
    return settle(() => {
      const { start, end, total } = this.pageRows(query);
      return { json: this.customers.renderJson(start, end), count: end - start, total };
    });
  }

  getUser(id: string): Promise<UserDocument | null> {
    return settle(() => {
      this.assertOpen();
      const stored = this.users.get(id);
      return stored === undefined ? null : userView(id, stored.doc);
    });
  }

  listUsers(query: PageQuery): Promise<UserPage> {
    return settle(() => {
      this.assertOpen();
      validateListQuery(query);
      const items = this.userOrder
        .slice(query.offset, query.limit)
        .map((id) => userView(id, this.users.get(id)!.doc));
      return { items, total: this.userOrder.size };
    });
  }

  async *documents<C extends CollectionName>(collection: C): AsyncGenerator<Collections[C]['doc']> {
    this.assertOpen();
    let count = 0;
    if (collection === 'customers') {
      // By id, not index: a customer inserted meanwhile shifts the indexes but not the order.
      for (let index = 0; index < this.customers.size;) {
        const doc = this.customers.read(index);
        yield doc;
        // A verify walks every document inside the server: let requests in now and then.
        if (++count % YIELD_EVERY === 0) await nextTurn();
        this.assertOpen();
        index = this.customers.upperBound(doc.id);
      }
      return;
    }
    const ids = [...this.users.keys()].sort(compareDocumentIds);
    for (const id of ids) {
      const stored = this.users.get(id);
      if (stored !== undefined) yield userView(id, stored.doc);
      if (++count % YIELD_EVERY === 0) await nextTurn();
      this.assertOpen();
    }
  }

  /**
   * Takes over the documents of `generation` (a rebuild) in one synchronous step, so readers see
   * the old models or the new, never a mix: every collection and the generation's checkpoint
   * `checkpoint`, or only `collections` (a rebuild of some projections), keeping this store's
   * checkpoint: the events after it are applied to them again, which their positions make
   * harmless. Refused (false) when this store has already applied events past the generation's
   * checkpoint: they would be lost. The generation is closed once taken over.
   */
  adopt(
    generation: MemoryReadStore,
    checkpoint: string,
    collections: readonly CollectionName[] | 'all' = 'all',
  ): boolean {
    this.assertOpen();
    generation.assertOpen();
    const live = this.checkpoints.get(checkpoint);
    const built = generation.checkpoints.get(checkpoint);
    if (live !== undefined && (built === undefined || comparePositions(live, built) > 0)) return false;
    if (collections === 'all' || collections.includes('customers')) this.customers = generation.customers;
    if (collections === 'all' || collections.includes('users')) {
      this.users = generation.users;
      this.userOrder = generation.userOrder;
    }
    if (collections === 'all') {
      if (built === undefined) this.checkpoints.delete(checkpoint);
      else this.checkpoints.set(checkpoint, built);
    }
    generation.closed = true;
    generation.customers = new CustomerColumns();
    generation.users = new Map();
    generation.userOrder = new UserOrder();
    generation.checkpoints.clear();
    return true;
  }

  ping(): Promise<void> {
    return settle(() => this.assertOpen());
  }

  close(): Promise<void> {
    this.closed = true;
    // Lets the memory go even while something still holds the store.
    this.customers = new CustomerColumns();
    this.users.clear();
    this.userOrder = new UserOrder();
    this.checkpoints.clear();
    return Promise.resolve();
  }

  /** The rows of a page: binary searches for the range, so the cost does not grow with the data. */
  private pageRows(query: CustomerListQuery): { start: number; end: number; total: number } {
    this.assertOpen();
    validateListQuery(query);
    const from = query.gt === undefined ? 0 : this.customers.upperBound(query.gt);
    const to = query.lt === undefined ? this.customers.size : this.customers.lowerBound(query.lt);
    const start = Math.min(to, from + query.offset);
    return { start, end: Math.max(start, Math.min(to, start + query.limit)), total: Math.max(0, to - from) };
  }

  private applyUser(id: string, position: Position, set: Partial<UserDocument>): void {
    const stored = this.users.get(id);
    if (stored !== undefined && comparePositions(stored.position, position) >= 0) return;
    const doc = withUserChange(stored?.doc ?? {}, set);
    // Its place in the list moves only when createdon does: once, when the user registers.
    if (stored === undefined || doc.createdon !== stored.doc.createdon) {
      if (stored !== undefined) this.userOrder.remove(id, stored.doc.createdon);
      this.userOrder.insert(id, doc.createdon);
    }
    this.users.set(id, { doc, position: copyPosition(position) });
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The read store is closed');
  }
}

/** Runs synchronous work as a promise: a throw becomes a rejection, as the port's callers expect. */
function settle<T>(work: () => T): Promise<T> {
  return new Promise<T>((resolve) => resolve(work()));
}

/** A copy in the document's field order, leaving out fields never set. */
function userView(id: string, doc: Partial<UserDocument>): UserDocument {
  return { id, ...userDocumentFields(doc) } as UserDocument;
}

function copyPosition(position: Position): Position {
  return { commit: position.commit, prepare: position.prepare };
}
