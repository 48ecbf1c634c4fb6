/** Text offsets are 32-bit. */
export const MAX_HEAP_BYTES = 0xfffffffe;
/** Customers one store can hold: 67 million. Each column reserves address space for them, not memory. */
export const MAX_ROWS = 2 ** 26;

export type Column = Float64Array<ArrayBuffer> | BigUint64Array<ArrayBuffer> | Uint32Array<ArrayBuffer>;
export interface ColumnType<T extends Column> {
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
export function heapOver(buffer: ArrayBuffer): Buffer<ArrayBuffer> {
  return Buffer.from<ArrayBuffer>(buffer);
}

/** `column` with room for `rows`, grown in place when it is a growable column, else copied into one. */
export function withRoom<T extends Column>(Type: ColumnType<T>, column: T, rows: number): T {
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
