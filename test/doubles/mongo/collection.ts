import { Document, ObjectId, UUID } from 'bson';
import { Query } from 'mingo';

import { bsonType, cloneValue, describe, getPath, keyString, StoredDocument, toView } from './bson-values';
import { badValue, CommandError } from './errors';

export interface IndexSpec {
  name: string;
  key: Document;
  unique?: boolean;
  sparse?: boolean;
  partialFilterExpression?: Document;
}

/** A stored document and the numeric view mingo matches and sorts on. */
export interface Entry {
  readonly doc: StoredDocument;
  readonly view: Record<string, unknown>;
}

export function entryOf(doc: StoredDocument): Entry {
  return { doc, view: toView(doc) as Record<string, unknown> };
}

class Index {
  /** Unique indexes only: index key -> `_id` key of the document holding it. */
  readonly owners = new Map<string, string>();
  private readonly fields: string[];
  private readonly partial?: Query;

  constructor(readonly spec: IndexSpec) {
    this.fields = Object.keys(spec.key);
    if (spec.partialFilterExpression) {
      this.partial = new Query(toView(spec.partialFilterExpression) as Document);
    }
  }

  get unique(): boolean {
    return this.spec.unique === true;
  }

  /** The index key of a document, or undefined when the index leaves it out (sparse, partial). */
  keyOf(entry: Entry): string | undefined {
    const values = this.fields.map((field) => getPath(entry.view, field));
    if (this.spec.sparse && values.every((value) => value === undefined)) return undefined;
    if (this.partial && !this.partial.test(entry.view)) return undefined;
    return keyString(values.map((value) => value ?? null));
  }

  duplicateKeyError(namespace: string, entry: Entry): CommandError {
    const keyValue: Document = {};
    for (const field of this.fields) keyValue[field] = getPath(entry.doc, field) ?? null;
    const rendered = this.fields.map((field) => `${field}: ${describe(keyValue[field])}`).join(', ');
    return new CommandError(
      11000,
      'DuplicateKey',
      `E11000 duplicate key error collection: ${namespace} index: ${this.spec.name} dup key: { ${rendered} }`,
      { keyPattern: this.spec.key, keyValue },
    );
  }
}

export const ID_INDEX: IndexSpec = { name: '_id_', key: { _id: 1 }, unique: true };

function sameSpec(a: IndexSpec, b: IndexSpec): boolean {
  return (
    keyString([a.key]) === keyString([b.key]) &&
    Boolean(a.unique) === Boolean(b.unique) &&
    Boolean(a.sparse) === Boolean(b.sparse) &&
    keyString([a.partialFilterExpression ?? null]) === keyString([b.partialFilterExpression ?? null])
  );
}

/**
 * One collection: documents in insertion order (MongoDB's natural order, near enough) and its
 * indexes, with unique ones enforced. Every write replaces whole entries, so an open cursor keeps
 * reading the documents as they were when it was opened.
 */
export class Collection {
  readonly uuid = new UUID();
  private readonly entries = new Map<string, Entry>();
  /** Each `_id` key's place in natural order (insertion order, kept by a rewrite). */
  private readonly places = new Map<string, number>();
  private nextPlace = 0;
  private readonly indexList: Index[];
  /** Every document inserted or updated must match it, as the server's query-operator validator. */
  private validator?: Query;

  constructor(
    public namespace: string,
    readonly options: Document = {},
  ) {
    this.indexList = [new Index(ID_INDEX)];
  }

  /** `create`'s or `collMod`'s validator; an empty one removes it. Documents stored are not checked. */
  setValidator(validator: Document): void {
    const empty = Object.keys(validator).length === 0;
    if (empty) delete this.options.validator;
    else this.options.validator = validator;
    this.validator = empty ? undefined : new Query(toView(validator) as Document);
  }

  get size(): number {
    return this.entries.size;
  }

  get indexes(): IndexSpec[] {
    return this.indexList.map((index) => index.spec);
  }

  all(): Entry[] {
    return [...this.entries.values()];
  }

  matching(filter: Document | undefined): Entry[] {
    if (!filter || Object.keys(filter).length === 0) return this.all();
    const query = new Query(toView(filter) as Document);
    // As the server's _id index: `_id` equal to a value, or `$in` a list, looks those documents up
    // instead of scanning them all (which made every write of a projector's batch, and every key
    // store lookup, cost the whole collection). mingo still decides on the whole filter.
    const ids = idLookup(filter._id);
    const candidates = ids === null ? this.all() : this.byIds(ids);
    return candidates.filter((entry) => query.test(entry.view));
  }

  /** The documents with those ids, in natural order. */
  private byIds(ids: unknown[]): Entry[] {
    const keys = new Set(ids.map((id) => keyString([id])));
    const found: Entry[] = [];
    for (const key of keys) {
      const entry = this.entries.get(key);
      if (entry) found.push(entry);
    }
    return found.sort((a, b) => this.placeOf(a) - this.placeOf(b));
  }

  insert(doc: StoredDocument, bypassValidation = false): Entry {
    const withId = '_id' in doc ? doc : { _id: new ObjectId(), ...doc };
    const entry = entryOf(withId);
    this.validate(entry, bypassValidation);
    this.checkUnique(entry, undefined);
    this.store(entry, undefined);
    return entry;
  }

  replace(previous: Entry, doc: StoredDocument, bypassValidation = false): Entry {
    const entry = entryOf(doc);
    this.validate(entry, bypassValidation);
    this.checkUnique(entry, previous);
    this.store(entry, previous);
    return entry;
  }

  remove(entry: Entry): void {
    this.entries.delete(idKey(entry));
    this.places.delete(idKey(entry));
    this.unindex(entry);
  }

  private placeOf(entry: Entry): number {
    return this.places.get(idKey(entry))!;
  }

  private unindex(entry: Entry): void {
    const id = idKey(entry);
    for (const index of this.indexList) {
      const key = index.unique ? index.keyOf(entry) : undefined;
      if (key !== undefined && index.owners.get(key) === id) index.owners.delete(key);
    }
  }

  /** Returns false when an identical index already exists. */
  createIndex(spec: IndexSpec): boolean {
    const sameName = this.indexList.find((index) => index.spec.name === spec.name);
    if (sameName) {
      if (sameSpec(sameName.spec, spec)) return false;
      throw new CommandError(
        86,
        'IndexKeySpecsConflict',
        `An existing index has the same name as the requested index but different options: ${spec.name}`,
      );
    }
    const sameKey = this.indexList.find((index) => keyString([index.spec.key]) === keyString([spec.key]));
    if (sameKey) {
      throw new CommandError(
        85,
        'IndexOptionsConflict',
        `Index already exists with a different name: ${sameKey.spec.name}`,
      );
    }
    const index = new Index(spec);
    if (index.unique) {
      for (const entry of this.entries.values()) {
        const key = index.keyOf(entry);
        if (key === undefined) continue;
        if (index.owners.has(key)) throw index.duplicateKeyError(this.namespace, entry);
        index.owners.set(key, idKey(entry));
      }
    }
    this.indexList.push(index);
    return true;
  }

  dropIndex(name: string): void {
    if (name === ID_INDEX.name) throw badValue('cannot drop _id index');
    const at = this.indexList.findIndex((index) => index.spec.name === name);
    if (at < 0) throw new CommandError(27, 'IndexNotFound', `index not found with name [${name}]`);
    this.indexList.splice(at, 1);
  }

  private validate(entry: Entry, bypass: boolean): void {
    if (bypass || !this.validator || this.validator.test(entry.view)) return;
    throw new CommandError(121, 'DocumentValidationFailure', 'Document failed validation', {
      errInfo: { failingDocumentId: entry.doc._id },
    });
  }

  private checkUnique(entry: Entry, previous: Entry | undefined): void {
    const previousId = previous && idKey(previous);
    for (const index of this.indexList) {
      if (!index.unique) continue;
      const key = index.keyOf(entry);
      const owner = key === undefined ? undefined : index.owners.get(key);
      if (owner !== undefined && owner !== previousId) throw index.duplicateKeyError(this.namespace, entry);
    }
  }

  private store(entry: Entry, previous: Entry | undefined): void {
    // Same `_id` (it is immutable), so Map.set keeps the document's place in natural order.
    if (previous) this.unindex(previous);
    const id = idKey(entry);
    this.entries.set(id, entry);
    if (!previous) this.places.set(id, this.nextPlace++);
    for (const index of this.indexList) {
      const key = index.unique ? index.keyOf(entry) : undefined;
      if (key !== undefined) index.owners.set(key, id);
    }
  }
}

/** BSON types whose equality is their index key's (not an operator document, array, regex or null). */
const ID_KEY_TYPES = new Set(['ObjectId', 'Binary', 'UUID', 'Int32', 'Double', 'Long']);

/** The ids an `_id` condition can only match, when it is an equality or `$eq`/`$in` of such values; else null. */
function idLookup(condition: unknown): unknown[] | null {
  if (isIdEquality(condition)) return [condition];
  if (condition === null || typeof condition !== 'object' || bsonType(condition) !== undefined) return null;
  const operators = Object.entries(condition);
  if (operators.length !== 1) return null;
  const [[operator, operand]] = operators;
  if (operator === '$eq' && isIdEquality(operand)) return [operand];
  if (operator === '$in' && Array.isArray(operand) && operand.every(isIdEquality)) return operand;
  return null;
}

function isIdEquality(value: unknown): boolean {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return true;
  if (value instanceof Date) return true;
  const type = bsonType(value);
  return type !== undefined && ID_KEY_TYPES.has(type);
}

function idKey(entry: Entry): string {
  return keyString([entry.view._id]);
}

/** A copy to edit; the stored entry itself is never mutated. */
export function editableCopy(entry: Entry): StoredDocument {
  return cloneValue(entry.doc);
}
