import { CUSTOMER_FIELD_NAMES, CustomerFieldName, CustomerFields } from '@chronicle/domain';
import { comparePositions, Position } from '@chronicle/event-store';
import { CustomerDocument } from '../read-store.port';
import {
  growableColumn,
  growableHeap,
  heapOver,
  MAX_HEAP_BYTES,
  MAX_ROWS,
  withRoom,
} from './growable-buffers';
import { canonicalTimestamp, escapeJson, put, putInteger, putTimestamp } from './json-bytes';

const INITIAL_ROWS = 1024;
const INITIAL_HEAP_BYTES = 64 * 1024;
/** Byte length marking a text field that was never set. */
const ABSENT = 0xffffffff;

/** Bytes of one rendered customer beside its name and e-mail: keys, id, timestamp, punctuation. */
const RENDERED_ROW_BYTES = 128;

/**
 * The columns as they are, for a snapshot: views of the first `rows` entries (no copy; they stay
 * valid while nothing is applied) and the text heap's used bytes, garbage included.
 */
export interface CustomerColumnsImage {
  rows: number;
  ids: Float64Array<ArrayBuffer>;
  created: Float64Array<ArrayBuffer>;
  commits: BigUint64Array<ArrayBuffer>;
  textStart: Uint32Array<ArrayBuffer>;
  nameBytes: Uint32Array<ArrayBuffer>;
  emailBytes: Uint32Array<ArrayBuffer>;
  heap: Uint8Array<ArrayBuffer>;
  /** Prepare positions that differ from their commit position, as [id, decimal]. */
  prepares: [number, string][];
  /** createdon values epoch ms cannot reproduce, as [id, text]. */
  irregularCreated: [number, string][];
}
const ascii = (text: string) => Uint8Array.from(text, (char) => char.charCodeAt(0));
const ID_KEY = ascii('{"id":');
/** What renderRow writes before each declared field's value, `,"name":`: made once, from CUSTOMER_FIELDS. */
const MEMBER_KEYS = Object.fromEntries(
  CUSTOMER_FIELD_NAMES.map((field) => [field, ascii(`,${JSON.stringify(field)}:`)]),
) as Record<CustomerFieldName, Uint8Array>;
const { name: NAME_KEY, email: EMAIL_KEY, createdon: CREATED_KEY } = MEMBER_KEYS;

/**
 * Customers as columns sorted by id: id, createdon (epoch ms) and commit position in typed
 * arrays, name and e-mail as UTF-8 in one byte heap, already escaped as JSON string contents.
 * That is 36 bytes plus the text per customer, where an object per customer with its strings
 * costs well over 100, and the id column can be binary searched. A page renders straight from
 * the columns into the JSON bytes GET /customers sends (renderJson), with no object or string
 * per customer. Every column grows in place by doubling; the heap is compacted when mostly garbage.
 */
export class CustomerColumns {
  private rows = 0;
  private ids = growableColumn(Float64Array, INITIAL_ROWS);
  private created = growableColumn(Float64Array, INITIAL_ROWS);
  private commits = growableColumn(BigUint64Array, INITIAL_ROWS);
  private textStart = growableColumn(Uint32Array, INITIAL_ROWS);
  private nameBytes = growableColumn(Uint32Array, INITIAL_ROWS);
  private emailBytes = growableColumn(Uint32Array, INITIAL_ROWS);
  /** Prepare positions that differ from their commit position (EventStoreDB), by customer id. */
  private readonly prepares = new Map<number, bigint>();
  /** createdon values that epoch ms cannot reproduce exactly, by customer id. */
  private readonly irregularCreated = new Map<number, string>();
  private heap: Buffer<ArrayBuffer> = growableHeap(INITIAL_HEAP_BYTES);
  private heapUsed = 0;
  private heapGarbage = 0;

  get size(): number {
    return this.rows;
  }

  /** This store's columns as an image: views, valid until the next change. */
  image(): CustomerColumnsImage {
    const rows = this.rows;
    return {
      rows,
      ids: this.ids.subarray(0, rows),
      created: this.created.subarray(0, rows),
      commits: this.commits.subarray(0, rows),
      textStart: this.textStart.subarray(0, rows),
      nameBytes: this.nameBytes.subarray(0, rows),
      emailBytes: this.emailBytes.subarray(0, rows),
      heap: this.heap.subarray(0, this.heapUsed),
      prepares: [...this.prepares].map(([id, prepare]) => [id, prepare.toString()]),
      irregularCreated: [...this.irregularCreated],
    };
  }

  /**
   * Columns taking over an image's arrays (a snapshot read back), after checking that they hold
   * what apply() would have built: ids strictly ascending, every text within the heap. Throws
   * RangeError when they do not.
   */
  static fromImage(image: CustomerColumnsImage): CustomerColumns {
    const { rows, ids, textStart, nameBytes, emailBytes, heap } = image;
    const columns = [ids, image.created, image.commits, textStart, nameBytes, emailBytes];
    if (columns.some((column) => column.length !== rows))
      throw new RangeError('Customer columns differ in length');
    let live = 0;
    for (let index = 0; index < rows; index++) {
      const id = ids[index];
      if (!Number.isSafeInteger(id) || (index > 0 && id <= ids[index - 1])) {
        throw new RangeError(`Customer ids out of order at row ${index}`);
      }
      const length = textLength(nameBytes[index]) + textLength(emailBytes[index]);
      if (textStart[index] + length > heap.length)
        throw new RangeError(`Customer ${id}: text beyond the heap`);
      live += length;
    }
    const restored = new CustomerColumns();
    restored.rows = rows;
    restored.ids = ids;
    restored.created = image.created;
    restored.commits = image.commits;
    restored.textStart = textStart;
    restored.nameBytes = nameBytes;
    restored.emailBytes = emailBytes;
    restored.heap = Buffer.from<ArrayBuffer>(heap.buffer, heap.byteOffset, heap.byteLength);
    restored.heapUsed = heap.byteLength;
    restored.heapGarbage = heap.byteLength - live;
    for (const [id, prepare] of image.prepares) restored.prepares.set(id, BigInt(prepare));
    for (const [id, createdon] of image.irregularCreated) restored.irregularCreated.set(id, createdon);
    return restored;
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
  apply(id: number, position: Position, fields: Partial<CustomerFields>): boolean {
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
      this.writeText(index, escapeJson(fields.name), escapeJson(fields.email));
    }
    return true;
  }

  /**
   * Deletes customer `id` (its subject was erased) unless it carries a position at or after
   * `position`. Its text is overwritten in the heap, so no snapshot taken after holds it.
   */
  remove(id: number, position: Position): boolean {
    const index = this.lowerBound(id);
    if (index >= this.rows || this.ids[index] !== id) return false;
    if (comparePositions(this.positionAt(index), position) >= 0) return false;
    const start = this.textStart[index];
    const length = textLength(this.nameBytes[index]) + textLength(this.emailBytes[index]);
    this.heap.fill(0, start, start + length);
    this.heapGarbage += length;
    this.prepares.delete(id);
    this.irregularCreated.delete(id);
    for (const column of this.columns()) column.copyWithin(index, index + 1, this.rows);
    this.rows--;
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
    if (nameLength !== ABSENT) doc.name = this.text(start, nameLength);
    if (emailLength !== ABSENT) doc.email = this.text(emailStart, emailLength);
    const created = this.created[index];
    const createdon = Number.isNaN(created) ? this.irregularCreated.get(id) : new Date(created).toISOString();
    if (createdon !== undefined) doc.createdon = createdon;
    return doc as CustomerDocument;
  }

  /** Customers `from` (inclusive) to `to` (exclusive) as a JSON array, byte for byte what read() would stringify to. */
  renderJson(from: number, to: number): Buffer {
    let bound = 2;
    for (let index = from; index < to; index++) {
      bound += RENDERED_ROW_BYTES + textLength(this.nameBytes[index]) + textLength(this.emailBytes[index]);
      if (Number.isNaN(this.created[index])) bound += this.irregularJson(index).length;
    }
    const out = Buffer.allocUnsafe(bound);
    let at = 0;
    out[at++] = 0x5b; // [
    for (let index = from; index < to; index++) {
      if (index > from) out[at++] = 0x2c; // ,
      at = this.renderRow(index, out, at);
    }
    out[at++] = 0x5d; // ]
    return out.subarray(0, at);
  }

  private renderRow(index: number, out: Buffer, at: number): number {
    const heap = this.heap;
    at = put(out, at, ID_KEY);
    at = putInteger(out, at, this.ids[index]);
    let text = this.textStart[index];
    const nameLength = this.nameBytes[index];
    if (nameLength !== ABSENT) {
      at = put(out, at, NAME_KEY);
      out[at++] = 0x22; // "
      for (const end = text + nameLength; text < end;) out[at++] = heap[text++];
      out[at++] = 0x22;
    }
    const emailLength = this.emailBytes[index];
    if (emailLength !== ABSENT) {
      at = put(out, at, EMAIL_KEY);
      out[at++] = 0x22;
      for (const end = text + emailLength; text < end;) out[at++] = heap[text++];
      out[at++] = 0x22;
    }
    const created = this.created[index];
    if (!Number.isNaN(created)) {
      at = put(out, at, CREATED_KEY);
      out[at++] = 0x22;
      at = putTimestamp(out, at, created);
      out[at++] = 0x22;
    } else if (this.irregularCreated.has(this.ids[index])) {
      at = put(out, at, CREATED_KEY);
      at += this.irregularJson(index).copy(out, at);
    }
    out[at++] = 0x7d; // }
    return at;
  }

  private irregularJson(index: number): Buffer {
    const createdon = this.irregularCreated.get(this.ids[index]);
    return createdon === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(createdon), 'utf8');
  }

  /** A stored (escaped) text field as the string it stands for. */
  private text(start: number, length: number): string {
    const stored = this.heap.toString('utf8', start, start + length);
    return stored.includes('\\') ? (JSON.parse(`"${stored}"`) as string) : stored;
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
    // A restored store's columns hold exactly its rows, possibly none.
    const capacity = Math.max(INITIAL_ROWS, this.ids.length * 2);
    if (capacity > MAX_ROWS) throw new RangeError(`Customers exceed ${MAX_ROWS}`);
    this.ids = withRoom(Float64Array, this.ids, capacity);
    this.created = withRoom(Float64Array, this.created, capacity);
    this.commits = withRoom(BigUint64Array, this.commits, capacity);
    this.textStart = withRoom(Uint32Array, this.textStart, capacity);
    this.nameBytes = withRoom(Uint32Array, this.nameBytes, capacity);
    this.emailBytes = withRoom(Uint32Array, this.emailBytes, capacity);
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
    // The old values are zeroed, not left as garbage: an erasure must find no earlier value either.
    this.heap.fill(0, oldStart, oldStart + textLength(oldName) + textLength(oldEmail));
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
    capacity = Math.min(capacity, MAX_HEAP_BYTES);
    const { buffer } = this.heap;
    if (!compact && buffer.resizable && this.heap.byteOffset === 0) {
      // Pages never written stay out of the RSS.
      buffer.resize(capacity);
      this.heap = heapOver(buffer);
      return;
    }
    const heap = growableHeap(capacity);
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
