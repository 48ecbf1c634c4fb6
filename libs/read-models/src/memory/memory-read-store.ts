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
import { CustomerColumns, CustomerColumnsImage } from './customer-columns';
import { UserOrder } from './user-order';

interface StoredUser {
  doc: Partial<UserDocument>;
  position: Position;
}

/** A user as a snapshot keeps it: id, document, position of the last change applied. */
export type UserImage = [id: string, doc: Partial<UserDocument>, position: Position];

/** A memory read store's whole contents, as a snapshot writes and reads them. */
export interface MemoryReadStoreImage {
  customers: CustomerColumnsImage;
  userCount: number;
  /** In list order (createdon, then id), so that a restore appends to the order. */
  users: Iterable<UserImage>;
  checkpoints: [string, Position][];
}

/** Told of what changes a memory read store: what keeps its snapshot current. */
export interface MemoryReadStoreObserver {
  /**
   * A batch has been applied, its checkpoint recorded; `removed`: it deleted documents (an
   * erasure), so what was kept of them elsewhere must go soon.
   */
  applied(checkpoint: Checkpoint, removed: boolean): void;
  /**
   * A rebuild's documents replaced these (adopt): a snapshot of the old ones is stale. Resolves
   * once it is gone from the disk.
   */
  replaced(): Promise<void>;
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
  /** While a snapshot reads the documents: batches wait for it. */
  private held: Promise<void> | null = null;
  private replacements = 0;
  private observer: MemoryReadStoreObserver | null = null;
  /** The observer's work on the last replacement (adopt): the old models' snapshot removed. */
  private replacement: Promise<void> = Promise.resolve();

  /** Counts the times the contents were replaced wholesale (adopt, close): a snapshot taken before is stale. */
  get generation(): number {
    return this.replacements;
  }

  /**
   * Resolves once nothing kept of the models the last adopt replaced is left (their snapshot is
   * removed, durably): a rebuild is answered after it, so a crash cannot bring them back.
   */
  oldModelsGone(): Promise<void> {
    return this.replacement;
  }

  /** The one observer (the snapshots); null to detach. */
  observe(observer: MemoryReadStoreObserver | null): void {
    this.observer = observer;
  }

  async applyBatch(changes: DocumentChange[], checkpoint: Checkpoint): Promise<void> {
    while (this.held !== null) await this.held;
    this.assertOpen();
    // Everything is checked before anything is applied, so a bad batch changes nothing.
    validateChanges(changes);
    validatePosition(checkpoint.position, 'checkpoint position');
    let removed = false;
    for (const change of changes) {
      removed ||= change.remove === true;
      if (change.collection === 'customers') {
        if (change.remove) this.customers.remove(change.id, change.position);
        else this.customers.apply(change.id, change.position, change.set);
      } else if (change.remove) {
        this.removeUser(change.id, change.position);
      } else {
        this.applyUser(change.id, change.position, change.set);
      }
    }
    this.checkpoints.set(checkpoint.projection, copyPosition(checkpoint.position));
    this.observer?.applied(checkpoint, removed);
  }

  /**
   * Runs `read` over the contents as they are, no batch being applied until it settles: a
   * snapshot then copies nothing, and reads and the event loop go on meanwhile. A rebuild may
   * still replace the contents (adopt swaps them, leaving the image intact): `generation` says so.
   */
  async holdStill<T>(read: (image: MemoryReadStoreImage) => Promise<T>): Promise<T> {
    this.assertOpen();
    while (this.held !== null) await this.held;
    let release!: () => void;
    this.held = new Promise<void>((resolve) => (release = resolve));
    try {
      const users = this.users;
      const order = this.userOrder;
      return await read({
        customers: this.customers.image(),
        userCount: users.size,
        users: (function* () {
          for (const id of order.ids()) {
            const stored = users.get(id);
            if (stored !== undefined) yield [id, stored.doc, stored.position] as UserImage;
          }
        })(),
        checkpoints: [...this.checkpoints].map(([name, at]) => [name, copyPosition(at)]),
      });
    } finally {
      this.held = null;
      release();
    }
  }

  /**
   * Takes a snapshot's contents (the arrays of `image.customers` are taken over, not copied) in
   * one step, unless anything has been applied or replaced since `generation`: false then, and
   * nothing changes. Throws RangeError, changing nothing, on contents apply() could not have built.
   */
  restore(image: MemoryReadStoreImage, generation: number): boolean {
    this.assertOpen();
    if (generation !== this.replacements || this.checkpoints.size > 0) return false;
    const customers = CustomerColumns.fromImage(image.customers);
    const users = new Map<string, StoredUser>();
    const userOrder = new UserOrder();
    for (const [id, doc, at] of image.users) {
      if (users.has(id)) throw new RangeError(`User ${id} appears twice`);
      // The checks a change to it would pass.
      validateChanges([{ collection: 'users', id, position: at, set: doc }]);
      users.set(id, { doc: userDocumentFields(doc), position: copyPosition(at) });
      userOrder.insert(id, doc.createdon);
    }
    for (const [, at] of image.checkpoints) validatePosition(at, 'checkpoint position');
    if (this.checkpoints.size > 0 || generation !== this.replacements) return false;
    this.customers = customers;
    this.users = users;
    this.userOrder = userOrder;
    for (const [name, at] of image.checkpoints) this.checkpoints.set(name, copyPosition(at));
    return true;
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
    this.replacements++;
    this.replacement = this.observer?.replaced() ?? Promise.resolve();
    generation.closed = true;
    generation.replacements++;
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
    this.replacements++;
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

  private removeUser(id: string, position: Position): void {
    const stored = this.users.get(id);
    if (stored === undefined || comparePositions(stored.position, position) >= 0) return;
    this.userOrder.remove(id, stored.doc.createdon);
    this.users.delete(id);
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
