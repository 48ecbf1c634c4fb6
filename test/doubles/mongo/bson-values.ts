import { Double, EJSON, Int32, Long } from 'bson';

import { typeMismatch } from './errors';

/** A document as stored: numbers are Int32/Double/Long wrappers so their BSON type survives. */
export type StoredDocument = Record<string, unknown>;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

export function bsonType(value: unknown): string | undefined {
  return value !== null && typeof value === 'object'
    ? (value as { _bsontype?: string })._bsontype
    : undefined;
}

/**
 * The value as mingo should see it: numeric wrappers become JS numbers, so int32 1, double 1.0
 * and int64 1 compare equal as in MongoDB. Int64 beyond 2^53 loses precision here (only here:
 * the stored value stays exact).
 */
export function toView(value: unknown): unknown {
  switch (bsonType(value)) {
    case 'Int32':
    case 'Double':
      return (value as Int32 | Double).value;
    case 'Long':
      return (value as Long).toNumber();
  }
  if (Array.isArray(value)) return value.map(toView);
  if (isPlainObject(value)) {
    const view: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) view[key] = toView(field);
    return view;
  }
  return value;
}

/**
 * The value at a dotted path (numeric segments index arrays), or undefined. Simpler than
 * MongoDB's implicit traversal of arrays; enough for index keys and `$inc`.
 */
export function getPath(doc: unknown, path: string): unknown {
  let value = doc;
  for (const segment of path.split('.')) {
    if (Array.isArray(value) && /^\d+$/.test(segment)) value = value[Number(segment)];
    else if (isPlainObject(value)) value = value[segment];
    else return undefined;
  }
  return value;
}

/** Deep copy of plain objects and arrays; BSON values are immutable and shared. */
export function cloneValue<T>(value: T): T {
  if (Array.isArray(value)) return value.map(cloneValue) as T;
  if (isPlainObject(value)) {
    const copy: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) copy[key] = cloneValue(field);
    return copy as T;
  }
  return value;
}

/** Text that is equal exactly when MongoDB's index would consider the values equal. */
export function keyString(values: unknown[]): string {
  return EJSON.stringify(values.map(toView), { relaxed: true });
}

/** A short rendering for error messages, like the server's `dup key: { _id: 5 }`. */
export function describe(value: unknown): string {
  return EJSON.stringify(toView(value), { relaxed: true });
}

function isNumeric(value: unknown): value is Int32 | Double | Long {
  const type = bsonType(value);
  return type === 'Int32' || type === 'Double' || type === 'Long';
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** `$inc` with MongoDB's type rules: double wins, then int64; an int32 overflow widens to int64. */
export function increment(current: unknown, by: unknown, path: string): Int32 | Double | Long {
  if (!isNumeric(by))
    throw typeMismatch(`Cannot increment with non-numeric argument: {${path}: ${describe(by)}}`);
  if (current === undefined) return by;
  if (!isNumeric(current)) {
    throw typeMismatch(
      `Cannot apply $inc to a value of non-numeric type. {_id: ...} has the field '${path}'`,
    );
  }
  if (current instanceof Double || by instanceof Double) {
    return new Double(Number(toView(current)) + Number(toView(by)));
  }
  if (current instanceof Long || by instanceof Long) {
    return Long.fromBigInt(BigInt(current.toString()) + BigInt(by.toString()));
  }
  const sum = current.value + by.value;
  return sum >= INT32_MIN && sum <= INT32_MAX ? new Int32(sum) : Long.fromNumber(sum);
}
