import { CUSTOMER_FIELD_NAMES, CustomerFieldName, CustomerFields } from '@chronicle/domain';
import { comparePositions, Position } from '@chronicle/event-store';
import { CustomerDocument } from '../read-store.port';

const INITIAL_ROWS = 1024;
const INITIAL_HEAP_BYTES = 64 * 1024;
/** Byte length marking a text field that was never set. */
const ABSENT = 0xffffffff;
/** Text offsets are 32-bit. */
const MAX_HEAP_BYTES = 0xfffffffe;
/** Customers one store can hold: 67 million. Each column reserves address space for them, not memory. */
const MAX_ROWS = 2 ** 26;

type Column = Float64Array<ArrayBuffer> | BigUint64Array<ArrayBuffer> | Uint32Array<ArrayBuffer>;
interface ColumnType<T extends Column> {
  new (buffer: ArrayBuffer): T;
  readonly BYTES_PER_ELEMENT: number;
}

/**
 * A column of `rows` zeroed entries over a resizable buffer, its length tracking the buffer's:
 * growing it in place commits pages as they are needed and copies nothing, where doubling into a
 * new array left the old one as garbage (a full replay of 1M customers left 130 MiB of it).
 */
export function growableColumn<T extends Column>(Type: ColumnType<T>, rows: number): T {
  const bytes = Type.BYTES_PER_ELEMENT;
  return new Type(new ArrayBuffer(rows * bytes, { maxByteLength: MAX_ROWS * bytes }));
}

/** A text heap of `bytes` over a resizable buffer (see growableColumn). */
export function growableHeap(bytes: number): Buffer<ArrayBuffer> {
  return heapOver(new ArrayBuffer(bytes, { maxByteLength: MAX_HEAP_BYTES }));
}

/** A Buffer over the whole of `buffer` (Buffer views never track a resizable buffer's length). */
function heapOver(buffer: ArrayBuffer): Buffer<ArrayBuffer> {
  return Buffer.from<ArrayBuffer>(buffer);
}

/** `column` with room for `rows`, grown in place when it is a growable column, else copied into one. */
function withRoom<T extends Column>(Type: ColumnType<T>, column: T, rows: number): T {
  const { buffer } = column;
  const bytes = rows * Type.BYTES_PER_ELEMENT;
  if (buffer.resizable && column.byteOffset === 0 && bytes <= buffer.maxByteLength) {
    buffer.resize(bytes);
    return new Type(buffer);
  }
  const grown = growableColumn(Type, rows);
  grown.set(column as never);
  return grown;
}

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

/** A text field as the contents of its JSON string literal (usually the text itself). */
function escapeJson(text: string | undefined): string | undefined {
  return text === undefined || !needsEscaping(text) ? text : JSON.stringify(text).slice(1, -1);
}

/** Whether JSON.stringify would change the text: a quote, a backslash, a control or surrogate code unit. */
function needsEscaping(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return true;
  }
  return false;
}

function put(out: Buffer, at: number, bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) out[at++] = bytes[i];
  return at;
}

/**
 * Writes an integer's decimal digits, as JSON.stringify would. The arithmetic below stays in
 * int32 (`| 0`): on doubles, V8 computes `%` by a call to fmod, several times slower.
 */
function putInteger(out: Buffer, at: number, value: number): number {
  if (!(value >= 0 && value <= 0x7fffffff && value === (value | 0))) {
    return at + out.write(JSON.stringify(value), at, 'latin1');
  }
  let digits = 1;
  for (let rest = value; rest >= 10; rest = (rest / 10) | 0) digits++;
  return putDigits(out, at, value, digits);
}

/**
 * Writes epoch ms (years 1000 to 9999, as canonicalTimestamp admits) as toISOString() does:
 * days to civil date by Howard Hinnant's algorithm, in int32 arithmetic, with no Date or string made.
 */
function putTimestamp(out: Buffer, at: number, ms: number): number {
  const days = Math.floor(ms / 86_400_000);
  const msOfDay = (ms - days * 86_400_000) | 0;
  const shifted = (days + 719_468) | 0;
  const era = Math.floor(shifted / 146_097) | 0;
  const dayOfEra = (shifted - era * 146_097) | 0;
  const yearOfEra =
    ((dayOfEra - ((dayOfEra / 1460) | 0) + ((dayOfEra / 36_524) | 0) - ((dayOfEra / 146_096) | 0)) / 365) | 0;
  const dayOfYear = (dayOfEra - (365 * yearOfEra + ((yearOfEra / 4) | 0) - ((yearOfEra / 100) | 0))) | 0;
  const monthIndex = ((5 * dayOfYear + 2) / 153) | 0;
  const day = (dayOfYear - (((153 * monthIndex + 2) / 5) | 0) + 1) | 0;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  const year = (yearOfEra + era * 400 + (month <= 2 ? 1 : 0)) | 0;
  const hour = (msOfDay / 3_600_000) | 0;
  const minute = ((msOfDay / 60_000) | 0) % 60;
  const second = ((msOfDay / 1000) | 0) % 60;
  at = putDigits(out, at, year, 4);
  out[at++] = 0x2d; // -
  at = putDigits(out, at, month, 2);
  out[at++] = 0x2d;
  at = putDigits(out, at, day, 2);
  out[at++] = 0x54; // T
  at = putDigits(out, at, hour, 2);
  out[at++] = 0x3a; // :
  at = putDigits(out, at, minute, 2);
  out[at++] = 0x3a;
  at = putDigits(out, at, second, 2);
  out[at++] = 0x2e; // .
  at = putDigits(out, at, msOfDay % 1000, 3);
  out[at++] = 0x5a; // Z
  return at;
}

/** Writes a non-negative int32 as exactly `width` digits, zero-padded. */
function putDigits(out: Buffer, at: number, value: number, width: number): number {
  for (let i = at + width - 1; i >= at; i--) {
    const rest = (value / 10) | 0;
    out[i] = 48 + value - rest * 10;
    value = rest;
  }
  return at + width;
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
