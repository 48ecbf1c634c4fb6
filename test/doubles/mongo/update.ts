import { Document, EJSON } from 'bson';
import { update as applyModifier } from 'mingo';

import { cloneValue, getPath, increment, StoredDocument, toView } from './bson-values';
import { CommandError, failedToParse, immutableField, notModelled } from './errors';

const SUPPORTED = new Set(['$set', '$unset', '$setOnInsert', '$inc', '$rename', '$push']);
const NOT_MODELLED = new Set([
  '$min',
  '$max',
  '$mul',
  '$currentDate',
  '$addToSet',
  '$pop',
  '$pull',
  '$pullAll',
  '$bit',
]);

function isOperatorUpdate(update: Document): boolean {
  const keys = Object.keys(update);
  return keys.length > 0 && keys.every((key) => key.startsWith('$'));
}

function checkPaths(modifier: Document): void {
  const paths: string[] = [];
  for (const [operator, fields] of Object.entries(modifier)) {
    if (!SUPPORTED.has(operator)) {
      if (NOT_MODELLED.has(operator)) throw notModelled(`the update operator ${operator}`);
      throw failedToParse(`Unknown modifier: ${operator}`);
    }
    for (const path of Object.keys(fields as Document)) {
      if (path.includes('$')) throw notModelled(`positional update paths (${path})`);
      paths.push(path);
      if (operator === '$rename') paths.push(String((fields as Document)[path]));
    }
  }
  paths.forEach((a, at) => {
    for (const b of paths.slice(at + 1)) {
      if (a === b || b.startsWith(`${a}.`) || a.startsWith(`${b}.`)) {
        throw new CommandError(
          40,
          'ConflictingUpdateOperators',
          `Updating the path '${b}' would create a conflict at '${a}'`,
        );
      }
    }
  });
}

function sameValue(a: unknown, b: unknown): boolean {
  return EJSON.stringify({ v: a }) === EJSON.stringify({ v: b });
}

/** `_id` first, as the server stores it. */
export function idFirst(doc: StoredDocument): StoredDocument {
  if (!('_id' in doc) || Object.keys(doc)[0] === '_id') return doc;
  const { _id, ...rest } = doc;
  return { _id, ...rest };
}

/**
 * Applies an update document (operators or a replacement) to a copy of `doc`. `inserting` is
 * true for an upsert's new document, where `$setOnInsert` applies.
 */
export function applyUpdate(
  doc: StoredDocument,
  update: Document | Document[],
  inserting: boolean,
): StoredDocument {
  if (Array.isArray(update)) throw notModelled('pipeline-style updates');
  const id = doc._id;
  if (!isOperatorUpdate(update)) {
    if (Object.keys(update).some((key) => key.startsWith('$'))) {
      throw failedToParse('a replacement document cannot contain $ operators');
    }
    if ('_id' in update && id !== undefined && !sameValue(toView(update._id), toView(id))) {
      throw immutableField(
        "After applying the update, the (immutable) field '_id' was found to have been altered",
      );
    }
    return idFirst({ ...(id === undefined ? {} : { _id: id }), ...cloneValue(update) });
  }
  checkPaths(update);
  const copy = cloneValue(doc);
  const { $inc, $setOnInsert, $set, ...rest } = update;
  const sets: Document = {
    ...($set as Document | undefined),
    ...(inserting ? ($setOnInsert as Document) : {}),
  };
  for (const [path, by] of Object.entries(($inc as Document | undefined) ?? {})) {
    sets[path] = increment(getPath(copy, path), by, path);
  }
  // `_id` is handled here, not by mingo (which refuses any write to it): settable only on insert.
  if ('_id' in sets) {
    if (id === undefined) copy._id = sets._id;
    else if (!sameValue(toView(sets._id), toView(id))) {
      throw immutableField(`Performing an update on the path '_id' would modify the immutable field '_id'`);
    }
    delete sets._id;
  }
  for (const fields of Object.values(rest)) {
    if (Object.keys(fields as Document).some((path) => path === '_id' || path.startsWith('_id.'))) {
      throw immutableField(`Performing an update on the path '_id' would modify the immutable field '_id'`);
    }
  }
  const modifier: Document = { ...rest, ...(Object.keys(sets).length > 0 ? { $set: sets } : {}) };
  if (Object.keys(modifier).length > 0)
    applyModifier(copy, modifier, undefined, undefined, { cloneMode: 'none' });
  return idFirst(copy);
}

/** The document an upsert starts from: the filter's equality conditions (MongoDB's rule, simplified). */
export function seedFromFilter(filter: Document): StoredDocument {
  const seed: StoredDocument = {};
  const equalities: Document = {};
  const collect = (conditions: Document): void => {
    for (const [key, value] of Object.entries(conditions)) {
      if (key === '$and') {
        for (const clause of value as Document[]) collect(clause);
        continue;
      }
      if (key.startsWith('$')) continue;
      const isOperatorObject =
        value !== null &&
        typeof value === 'object' &&
        Object.getPrototypeOf(value) === Object.prototype &&
        Object.keys(value as Document).some((k) => k.startsWith('$'));
      if (!isOperatorObject) equalities[key] = cloneValue(value);
      else if ('$eq' in (value as Document)) equalities[key] = cloneValue((value as Document).$eq);
    }
  };
  collect(filter);
  const { _id, ...fields } = equalities;
  if (_id !== undefined) seed._id = _id;
  // mingo's $set builds the nested objects a dotted path needs.
  if (Object.keys(fields).length > 0)
    applyModifier(seed, { $set: fields }, undefined, undefined, { cloneMode: 'none' });
  return seed;
}
