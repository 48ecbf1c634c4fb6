import { comparePositions, Position } from '@chronicle/event-store';
import { CustomerDocument } from '../read-store.port';

/** The customer fields a change may set; `id` is the key and never changes. */
export type CustomerFields = Partial<Omit<CustomerDocument, 'id'>>;

const INITIAL_ROWS = 1024;
const INITIAL_HEAP_BYTES = 64 * 1024;
/** Byte length marking a text field that was never set. */
const ABSENT = 0xffffffff;
/** Text offsets are 32-bit. */
const MAX_HEAP_BYTES = 0xfffffffe;

/**
 * Customers as columns sorted by id: id, createdon (epoch ms) and commit position in typed
 * arrays, name and e-mail as UTF-8 in one byte heap. That is 36 bytes plus the text per customer,
 * where an object per customer with its strings costs well over 100, and the id column can be
 * binary searched. Every column grows by doubling; the heap is compacted when mostly garbage.
 */
export class CustomerColumns {
  private rows = 0;
  private ids = new Float64Array(INITIAL_ROWS);
  private created = new Float64Array(INITIAL_ROWS);
  private commits = new BigUint64Array(INITIAL_ROWS);
  private textStart = new Uint32Array(INITIAL_ROWS);
  private nameBytes = new Uint32Array(INITIAL_ROWS);
  private emailBytes = new Uint32Array(INITIAL_ROWS);
  /** Prepare positions that differ from their commit position (EventStoreDB), by customer id. */
  private readonly prepares = new Map<number, bigint>();
  /** createdon values that epoch ms cannot reproduce exactly, by customer id. */
  private readonly irregularCreated = new Map<number, string>();
  private heap = Buffer.alloc(INITIAL_HEAP_BYTES);
  private heapUsed = 0;
  private heapGarbage = 0;

  get size(): number {
    return this.rows;
  }

  /** Index of the first customer whose id is >= `id`. */
  lowerBound(id: number): number {
    let low = 0;
    let high = this.rows;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.ids[mid] < id) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** Index of the first customer whose id is > `id`. */
  upperBound(id: number): number {
    let low = 0;
    let high = this.rows;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.ids[mid] <= id) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /**
   * Sets `fields` on customer `id`, creating it when absent, unless it already carries a position
   * at or after `position`. Returns whether the change was applied.
   */
  apply(id: number, position: Position, fields: CustomerFields): boolean {
    // Ids almost always arrive in increasing order: appending needs no search.
    const index = this.rows === 0 || id > this.ids[this.rows - 1] ? this.rows : this.lowerBound(id);
    if (index < this.rows && this.ids[index] === id) {
      if (comparePositions(this.positionAt(index), position) >= 0) return false;
    } else {
      this.insertAt(index, id);
    }
    this.commits[index] = position.commit;
    if (position.prepare === position.commit) this.prepares.delete(id);
    else this.prepares.set(id, position.prepare);
    if (fields.createdon !== undefined) this.setCreated(index, id, fields.createdon);
    if (fields.name !== undefined || fields.email !== undefined) {
      this.writeText(index, fields.name, fields.email);
    }
    return true;
  }

  /** The customer at `index`; a field never set is left out. */
  read(index: number): CustomerDocument {
    const id = this.ids[index];
    const doc: Partial<CustomerDocument> = { id };
    const start = this.textStart[index];
    const nameLength = this.nameBytes[index];
    const emailLength = this.emailBytes[index];
    const emailStart = start + (nameLength === ABSENT ? 0 : nameLength);
    if (nameLength !== ABSENT) doc.name = this.heap.toString('utf8', start, start + nameLength);
    if (emailLength !== ABSENT) doc.email = this.heap.toString('utf8', emailStart, emailStart + emailLength);
    const created = this.created[index];
    const createdon = Number.isNaN(created) ? this.irregularCreated.get(id) : new Date(created).toISOString();
    if (createdon !== undefined) doc.createdon = createdon;
    return doc as CustomerDocument;
  }

  private positionAt(index: number): Position {
    const commit = this.commits[index];
    return { commit, prepare: this.prepares.get(this.ids[index]) ?? commit };
  }

  private setCreated(index: number, id: number, createdon: string): void {
    const ms = canonicalTimestamp(createdon);
    if (ms === null) {
      this.created[index] = NaN;
      this.irregularCreated.set(id, createdon);
    } else {
      this.created[index] = ms;
      this.irregularCreated.delete(id);
    }
  }

  private insertAt(index: number, id: number): void {
    if (this.rows === this.ids.length) this.growRows();
    if (index < this.rows) {
      for (const column of this.columns()) column.copyWithin(index + 1, index, this.rows);
    }
    this.ids[index] = id;
    this.created[index] = NaN;
    this.commits[index] = 0n;
    this.textStart[index] = 0;
    this.nameBytes[index] = ABSENT;
    this.emailBytes[index] = ABSENT;
    this.rows++;
  }

  private columns(): (Float64Array | BigUint64Array | Uint32Array)[] {
    return [this.ids, this.created, this.commits, this.textStart, this.nameBytes, this.emailBytes];
  }

  private growRows(): void {
    const capacity = this.ids.length * 2;
    const ids = new Float64Array(capacity);
    const created = new Float64Array(capacity);
    const commits = new BigUint64Array(capacity);
    const textStart = new Uint32Array(capacity);
    const nameBytes = new Uint32Array(capacity);
    const emailBytes = new Uint32Array(capacity);
    ids.set(this.ids);
    created.set(this.created);
    commits.set(this.commits);
    textStart.set(this.textStart);
    nameBytes.set(this.nameBytes);
    emailBytes.set(this.emailBytes);
    this.ids = ids;
    this.created = created;
    this.commits = commits;
    this.textStart = textStart;
    this.nameBytes = nameBytes;
    this.emailBytes = emailBytes;
  }

  /**
   * Writes the customer's name and e-mail as a new record at the end of the heap, copying the
   * field that is not being set, and turns the old record into garbage.
   */
  private writeText(index: number, name: string | undefined, email: string | undefined): void {
    const oldName = this.nameBytes[index];
    const oldEmail = this.emailBytes[index];
    const newName = name === undefined ? oldName : Buffer.byteLength(name, 'utf8');
    const newEmail = email === undefined ? oldEmail : Buffer.byteLength(email, 'utf8');
    this.reserveHeap(textLength(newName) + textLength(newEmail));
    // Read after reserving: compaction moves every record.
    const oldStart = this.textStart[index];
    const start = this.heapUsed;
    if (name !== undefined) this.heap.write(name, start, 'utf8');
    else this.heap.copy(this.heap, start, oldStart, oldStart + textLength(oldName));
    const emailStart = start + textLength(newName);
    const oldEmailStart = oldStart + textLength(oldName);
    if (email !== undefined) this.heap.write(email, emailStart, 'utf8');
    else this.heap.copy(this.heap, emailStart, oldEmailStart, oldEmailStart + textLength(oldEmail));
    this.heapUsed = emailStart + textLength(newEmail);
    this.heapGarbage += textLength(oldName) + textLength(oldEmail);
    this.textStart[index] = start;
    this.nameBytes[index] = newName;
    this.emailBytes[index] = newEmail;
  }

  private reserveHeap(bytes: number): void {
    if (this.heapUsed + bytes <= this.heap.length) return;
    const live = this.heapUsed - this.heapGarbage;
    const compact = this.heapGarbage >= this.heapUsed / 2;
    const needed = (compact ? live : this.heapUsed) + bytes;
    if (needed > MAX_HEAP_BYTES) throw new RangeError('Customer names and e-mails exceed 4 GiB');
    let capacity = Math.max(this.heap.length, INITIAL_HEAP_BYTES);
    while (capacity < needed) capacity *= 2;
    const heap = Buffer.alloc(Math.min(capacity, MAX_HEAP_BYTES));
    if (compact) {
      let used = 0;
      for (let i = 0; i < this.rows; i++) {
        const length = textLength(this.nameBytes[i]) + textLength(this.emailBytes[i]);
        this.heap.copy(heap, used, this.textStart[i], this.textStart[i] + length);
        this.textStart[i] = used;
        used += length;
      }
      this.heapUsed = used;
      this.heapGarbage = 0;
    } else {
      this.heap.copy(heap, 0, 0, this.heapUsed);
    }
    this.heap = heap;
  }
}

function textLength(bytes: number): number {
  return bytes === ABSENT ? 0 : bytes;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const CANONICAL_SHAPE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * Epoch ms of an RFC 3339 UTC timestamp in exactly the form toISOString() writes back
 * (`2026-11-22T09:15:00.000Z`, years 1000 to 9999), else null. Parsed by hand: Date.parse plus
 * a toISOString() round trip costs more than the rest of applying a customer.
 */
export function canonicalTimestamp(text: string): number | null {
  if (!CANONICAL_SHAPE.test(text)) return null;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  const hour = digits(text, 11, 13);
  const minute = digits(text, 14, 16);
  const second = digits(text, 17, 19);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const monthDays = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > monthDays) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  return Date.UTC(year, month - 1, day, hour, minute, second, digits(text, 20, 23));
}

function digits(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) value = value * 10 + text.charCodeAt(i) - 48;
  return value;
}
