import { Document, EJSON, Long } from 'bson';
import { Aggregator, find as mingoFind, Query } from 'mingo';

import { StoredDocument, toView } from './bson-values';
import { Collection, Entry, IndexSpec } from './collection';
import {
  badValue,
  CommandError,
  failedToParse,
  namespaceExists,
  namespaceNotFound,
  notModelled,
} from './errors';
import { applyUpdate, idFirst, seedFromFilter } from './update';

export const MAX_WIRE_VERSION = 21;
const SERVER_VERSION = '7.0.0';
const MAX_BSON_OBJECT_SIZE = 16 * 1024 * 1024;
const DEFAULT_FIRST_BATCH = 101;

export interface CommandContext {
  db: string;
  command: Document;
  connectionId: number;
}

interface OpenCursor {
  ns: string;
  docs: Document[];
  at: number;
  /** Why the server killed it (its collection was dropped or renamed): the next getMore fails so. */
  killed?: CommandError;
}

/** Fields any command may carry that change nothing in a single-node, in-memory server. */
const ENVELOPE = new Set([
  '$db',
  'lsid',
  '$clusterTime',
  '$readPreference',
  'readConcern',
  'writeConcern',
  'comment',
  'maxTimeMS',
  'apiVersion',
  'apiStrict',
  'apiDeprecationErrors',
]);

function num(value: unknown, fallback = 0): number {
  return value === undefined || value === null ? fallback : Number(toView(value));
}

function rejectUnknownOptions(command: Document, known: string[]): void {
  const allowed = new Set([Object.keys(command)[0], ...known]);
  for (const key of Object.keys(command)) {
    if (!allowed.has(key) && !ENVELOPE.has(key))
      throw notModelled(`the ${Object.keys(command)[0]} option '${key}'`);
  }
}

function stringArg(command: Document, name: string): string {
  const value = command[name] as unknown;
  if (typeof value !== 'string' || value.length === 0) {
    throw new CommandError(73, 'InvalidNamespace', `${name} must be a collection name`);
  }
  return value;
}

/**
 * Sorted as MongoDB sorts without a collation: strings by their UTF-8 bytes. mingo compares
 * JavaScript's UTF-16 units, which put U+1F600 before U+FF21, so it sorts views whose strings are
 * their UTF-8 bytes spelled one character a byte: UTF-16 order of those is byte order.
 */
function sortEntries(entries: Entry[], sort: Document | undefined): Entry[] {
  if (!sort || Object.keys(sort).length === 0) return entries;
  const byView = new Map(entries.map((entry) => [bytewise(entry.view) as object, entry]));
  return mingoFind([...byView.keys()], {})
    .sort(toView(sort) as Record<string, 1 | -1>)
    .all()
    .map((view) => byView.get(view)!);
}

function bytewise(value: unknown): unknown {
  if (typeof value === 'string') return Buffer.from(value, 'utf8').toString('latin1');
  if (Array.isArray(value)) return value.map(bytewise);
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, bytewise(field)]));
  }
  return value;
}

function writeError(index: number, error: CommandError): Document {
  return { index, code: error.code, errmsg: error.message, ...error.extra };
}

/** The in-memory server: databases of collections, open cursors, and one handler per command. */
export class MongoState {
  private readonly databases = new Map<string, Map<string, Collection>>();
  private readonly cursors = new Map<bigint, OpenCursor>();
  // Starts above 2^32 so cursor ids exercise int64 encoding.
  private nextCursorId = 2n ** 32n;

  private readonly handlers: Record<string, (context: CommandContext) => Document> = {
    hello: (c) => this.hello(c),
    isMaster: (c) => this.hello(c),
    ismaster: (c) => this.hello(c),
    ping: () => ({ ok: 1 }),
    buildInfo: () => this.buildInfo(),
    buildinfo: () => this.buildInfo(),
    endSessions: () => ({ ok: 1 }),
    find: (c) => this.find(c),
    getMore: (c) => this.getMore(c),
    killCursors: (c) => this.killCursors(c),
    aggregate: (c) => this.aggregate(c),
    count: (c) => this.count(c),
    insert: (c) => this.insert(c),
    update: (c) => this.update(c),
    delete: (c) => this.delete(c),
    create: (c) => this.create(c),
    collMod: (c) => this.collMod(c),
    createIndexes: (c) => this.createIndexes(c),
    listIndexes: (c) => this.listIndexes(c),
    dropIndexes: (c) => this.dropIndexes(c),
    listCollections: (c) => this.listCollections(c),
    drop: (c) => this.drop(c),
    dropDatabase: (c) => this.dropDatabase(c),
    renameCollection: (c) => this.renameCollection(c),
  };

  static isHandshake(name: string): boolean {
    return name === 'hello' || name === 'isMaster' || name === 'ismaster';
  }

  run(context: CommandContext): Document {
    const name = Object.keys(context.command)[0];
    try {
      const handler = Object.hasOwn(this.handlers, name) ? this.handlers[name] : undefined;
      if (!handler) {
        return { ok: 0, errmsg: `no such command: '${name}'`, code: 59, codeName: 'CommandNotFound' };
      }
      if ('txnNumber' in context.command || 'startTransaction' in context.command) {
        // What a standalone server answers: transactions and retryable writes need a replica set.
        throw new CommandError(
          20,
          'IllegalOperation',
          'Transaction numbers are only allowed on a replica set member or mongos',
        );
      }
      return handler(context);
    } catch (error) {
      if (error instanceof CommandError) return error.toReply();
      // A bug in the double (or a mingo refusal) surfaces as a server error, not a dropped connection.
      const message = error instanceof Error ? error.message : String(error);
      return {
        ok: 0,
        errmsg: `mongo double failed on ${name}: ${message}`,
        code: 1,
        codeName: 'InternalError',
      };
    }
  }

  private database(name: string): Map<string, Collection> {
    let database = this.databases.get(name);
    if (!database) {
      database = new Map();
      this.databases.set(name, database);
    }
    return database;
  }

  private existing(db: string, name: string): Collection | undefined {
    return this.databases.get(db)?.get(name);
  }

  private ensure(db: string, name: string): { collection: Collection; created: boolean } {
    const database = this.database(db);
    const existing = database.get(name);
    if (existing) return { collection: existing, created: false };
    const collection = new Collection(`${db}.${name}`);
    database.set(name, collection);
    return { collection, created: true };
  }

  private hello({ connectionId }: CommandContext): Document {
    return {
      helloOk: true,
      ismaster: true,
      isWritablePrimary: true,
      maxBsonObjectSize: MAX_BSON_OBJECT_SIZE,
      maxMessageSizeBytes: 48_000_000,
      maxWriteBatchSize: 100_000,
      localTime: new Date(),
      // Advertising sessions makes the driver send lsid and endSessions, as against a real server.
      logicalSessionTimeoutMinutes: 30,
      connectionId,
      minWireVersion: 0,
      maxWireVersion: MAX_WIRE_VERSION,
      readOnly: false,
      ok: 1,
    };
  }

  private buildInfo(): Document {
    return {
      version: SERVER_VERSION,
      versionArray: SERVER_VERSION.split('.').map(Number).concat(0),
      gitVersion: 'mongo-double',
      bits: 64,
      maxBsonObjectSize: MAX_BSON_OBJECT_SIZE,
      ok: 1,
    };
  }

  private openCursor(ns: string, docs: Document[], batchSize: number | undefined, single: boolean): Document {
    const size = batchSize ?? DEFAULT_FIRST_BATCH;
    const firstBatch = docs.slice(0, size);
    if (single || firstBatch.length === docs.length) {
      return { cursor: { firstBatch, id: Long.ZERO, ns }, ok: 1 };
    }
    const id = this.nextCursorId++;
    this.cursors.set(id, { ns, docs, at: firstBatch.length });
    return { cursor: { firstBatch, id: Long.fromBigInt(id), ns }, ok: 1 };
  }

  private find({ db, command }: CommandContext): Document {
    rejectUnknownOptions(command, [
      'filter',
      'sort',
      'projection',
      'skip',
      'limit',
      'batchSize',
      'singleBatch',
      'hint',
      'noCursorTimeout',
      'allowPartialResults',
    ]);
    const name = stringArg(command, 'find');
    const collection = this.existing(db, name);
    // As the server: a hint by name must name an index of the collection (an empty one included).
    if (
      typeof command.hint === 'string' &&
      collection &&
      !collection.indexes.some((index) => index.name === command.hint)
    ) {
      throw badValue(
        'error processing query: planner returned error :: caused by :: hint provided does not correspond to an existing index',
      );
    }
    let entries = sortEntries(
      collection?.matching(command.filter as Document) ?? [],
      command.sort as Document,
    );
    const skip = num(command.skip);
    const limit = num(command.limit);
    if (skip < 0) throw badValue('skip value must be non-negative');
    entries = entries.slice(skip, limit === 0 ? undefined : skip + Math.abs(limit));
    let docs: Document[] = entries.map((entry) => entry.doc);
    const projection = command.projection as Document | undefined;
    if (projection && Object.keys(projection).length > 0) {
      docs = mingoFind(docs, {}, toView(projection) as Document)
        .all()
        .map((doc) => idFirst(doc));
    }
    const batchSize = command.batchSize === undefined ? undefined : num(command.batchSize);
    return this.openCursor(`${db}.${name}`, docs, batchSize, command.singleBatch === true || limit < 0);
  }

  private getMore({ db, command }: CommandContext): Document {
    rejectUnknownOptions(command, ['collection', 'batchSize']);
    const id = BigInt((command.getMore as Long).toString());
    const cursor = this.cursors.get(id);
    if (!cursor) throw new CommandError(43, 'CursorNotFound', `cursor id ${id} not found`);
    if (cursor.killed) {
      this.cursors.delete(id);
      throw cursor.killed;
    }
    const ns = `${db}.${String(command.collection)}`;
    if (cursor.ns !== ns) {
      throw new CommandError(
        13,
        'Unauthorized',
        `Requested getMore on namespace '${ns}', but cursor belongs to '${cursor.ns}'`,
      );
    }
    const size = command.batchSize === undefined ? cursor.docs.length : num(command.batchSize);
    const nextBatch = cursor.docs.slice(cursor.at, cursor.at + size);
    cursor.at += nextBatch.length;
    const exhausted = cursor.at >= cursor.docs.length;
    if (exhausted) this.cursors.delete(id);
    return { cursor: { nextBatch, id: exhausted ? Long.ZERO : Long.fromBigInt(id), ns }, ok: 1 };
  }

  /** What a server does to the cursors of a collection it drops or renames (QueryPlanKilled, 175). */
  private killCursorsOn(ns: string, why: string): void {
    for (const cursor of this.cursors.values()) {
      if (cursor.ns === ns) {
        cursor.killed = new CommandError(
          175,
          'QueryPlanKilled',
          `Executor error during getMore :: caused by :: ${why}`,
        );
      }
    }
  }

  private killCursors({ command }: CommandContext): Document {
    const cursorsKilled: Long[] = [];
    const cursorsNotFound: Long[] = [];
    for (const id of (command.cursors as Long[] | undefined) ?? []) {
      (this.cursors.delete(BigInt(id.toString())) ? cursorsKilled : cursorsNotFound).push(id);
    }
    return { cursorsKilled, cursorsNotFound, cursorsAlive: [], cursorsUnknown: [], ok: 1 };
  }

  private aggregate({ db, command }: CommandContext): Document {
    rejectUnknownOptions(command, ['pipeline', 'cursor', 'hint', 'allowDiskUse']);
    if (typeof command.aggregate !== 'string') throw notModelled('database-level aggregation');
    const name = command.aggregate;
    const pipeline = (command.pipeline as Document[] | undefined) ?? [];
    if (!Array.isArray(pipeline)) throw failedToParse("'pipeline' option must be specified as an array");
    let entries = this.existing(db, name)?.all() ?? [];
    // Stages that only select and order run on stored documents, so their BSON types survive;
    // the rest (reshaping) run in mingo on the numeric view.
    let at = 0;
    for (; at < pipeline.length; at++) {
      const [stage, spec] = Object.entries(pipeline[at])[0] as [string, unknown];
      if (stage === '$match') {
        const query = new Query(toView(spec) as Document);
        entries = entries.filter((entry) => query.test(entry.view));
      } else if (stage === '$sort') entries = sortEntries(entries, spec as Document);
      else if (stage === '$skip') entries = entries.slice(num(spec));
      else if (stage === '$limit') entries = entries.slice(0, num(spec));
      else break;
    }
    const rest = pipeline.slice(at).map((stage) => toView(stage) as Document);
    for (const stage of rest) {
      const name = Object.keys(stage)[0];
      if (!AGGREGATION_STAGES.has(name)) throw notModelled(`the aggregation stage ${name}`);
    }
    const docs =
      rest.length === 0
        ? entries.map((entry) => entry.doc)
        : new Aggregator(rest).run(entries.map((entry) => entry.view));
    const cursorSpec = (command.cursor as Document | undefined) ?? {};
    const batchSize = cursorSpec.batchSize === undefined ? undefined : num(cursorSpec.batchSize);
    return this.openCursor(`${db}.${name}`, docs, batchSize, false);
  }

  private count({ db, command }: CommandContext): Document {
    rejectUnknownOptions(command, ['query', 'skip', 'limit', 'hint']);
    const matched = this.existing(db, stringArg(command, 'count'))?.matching(command.query as Document) ?? [];
    const skip = num(command.skip);
    const limit = Math.abs(num(command.limit));
    return { n: matched.slice(skip, limit === 0 ? undefined : skip + limit).length, ok: 1 };
  }

  private insert({ db, command }: CommandContext): Document {
    rejectUnknownOptions(command, ['documents', 'ordered', 'bypassDocumentValidation']);
    const { collection } = this.ensure(db, stringArg(command, 'insert'));
    const bypass = command.bypassDocumentValidation === true;
    const ordered = command.ordered !== false;
    const writeErrors: Document[] = [];
    let n = 0;
    for (const [index, doc] of ((command.documents as StoredDocument[]) ?? []).entries()) {
      try {
        collection.insert(idFirst(doc), bypass);
        n++;
      } catch (error) {
        if (!(error instanceof CommandError)) throw error;
        writeErrors.push(writeError(index, error));
        if (ordered) break;
      }
    }
    return { n, ...(writeErrors.length > 0 ? { writeErrors } : {}), ok: 1 };
  }

  private update({ db, command }: CommandContext): Document {
    rejectUnknownOptions(command, ['updates', 'ordered', 'bypassDocumentValidation', 'let']);
    if (command.let !== undefined) throw notModelled("the update option 'let'");
    const name = stringArg(command, 'update');
    const bypass = command.bypassDocumentValidation === true;
    const ordered = command.ordered !== false;
    const writeErrors: Document[] = [];
    const upserted: Document[] = [];
    let n = 0;
    let nModified = 0;
    for (const [index, statement] of ((command.updates as Document[]) ?? []).entries()) {
      try {
        for (const option of ['arrayFilters', 'collation', 'sort']) {
          if (statement[option] !== undefined) throw notModelled(`the update option '${option}'`);
        }
        const filter = (statement.q as Document) ?? {};
        const update = statement.u as Document;
        const multi = statement.multi === true;
        const isReplacement =
          !Array.isArray(update) && !Object.keys(update).some((key) => key.startsWith('$'));
        if (multi && isReplacement)
          throw failedToParse('multi update is not supported for replacement-style update');
        const collection = this.existing(db, name);
        const matched = collection?.matching(filter) ?? [];
        const targets = multi ? matched : matched.slice(0, 1);
        if (collection && targets.length > 0) {
          for (const entry of targets) {
            const next = applyUpdate(entry.doc, update, false);
            n++;
            if (!sameDocument(next, entry.doc)) {
              collection.replace(entry, next, bypass);
              nModified++;
            }
          }
        } else if (statement.upsert === true) {
          const doc = applyUpdate(seedFromFilter(filter), update, true);
          const inserted = this.ensure(db, name).collection.insert(doc, bypass);
          upserted.push({ index, _id: inserted.doc._id });
          n++;
        }
      } catch (error) {
        if (!(error instanceof CommandError)) throw error;
        writeErrors.push(writeError(index, error));
        if (ordered) break;
      }
    }
    return {
      n,
      nModified,
      ...(upserted.length > 0 ? { upserted } : {}),
      ...(writeErrors.length > 0 ? { writeErrors } : {}),
      ok: 1,
    };
  }

  private delete({ db, command }: CommandContext): Document {
    rejectUnknownOptions(command, ['deletes', 'ordered', 'let']);
    if (command.let !== undefined) throw notModelled("the delete option 'let'");
    const collection = this.existing(db, stringArg(command, 'delete'));
    const ordered = command.ordered !== false;
    const writeErrors: Document[] = [];
    let n = 0;
    for (const [index, statement] of ((command.deletes as Document[]) ?? []).entries()) {
      try {
        if (statement.collation !== undefined) throw notModelled("the delete option 'collation'");
        const matched = collection?.matching(statement.q as Document) ?? [];
        const targets = num(statement.limit) === 1 ? matched.slice(0, 1) : matched;
        for (const entry of targets) collection!.remove(entry);
        n += targets.length;
      } catch (error) {
        if (!(error instanceof CommandError)) throw error;
        writeErrors.push(writeError(index, error));
        if (ordered) break;
      }
    }
    return { n, ...(writeErrors.length > 0 ? { writeErrors } : {}), ok: 1 };
  }

  private create({ db, command }: CommandContext): Document {
    rejectUnknownOptions(command, ['validator']);
    const name = stringArg(command, 'create');
    const { collection, created } = this.ensure(db, name);
    if (!created) throw namespaceExists(`Collection ${db}.${name} already exists.`);
    if (command.validator !== undefined) collection.setValidator(command.validator as Document);
    return { ok: 1 };
  }

  /** Only a validator change (a query-operator one); `validationLevel` and `validationAction` stay their defaults. */
  private collMod({ db, command }: CommandContext): Document {
    rejectUnknownOptions(command, ['validator']);
    const name = stringArg(command, 'collMod');
    const collection = this.existing(db, name);
    if (!collection) throw namespaceNotFound(`ns does not exist: ${db}.${name}`);
    if (command.validator !== undefined) collection.setValidator(command.validator as Document);
    return { ok: 1 };
  }

  private createIndexes({ db, command }: CommandContext): Document {
    rejectUnknownOptions(command, ['indexes', 'commitQuorum']);
    const { collection, created } = this.ensure(db, stringArg(command, 'createIndexes'));
    const before = collection.indexes.length;
    let added = 0;
    for (const spec of (command.indexes as Document[]) ?? []) {
      added += collection.createIndex(indexSpec(spec)) ? 1 : 0;
    }
    return {
      numIndexesBefore: before,
      numIndexesAfter: collection.indexes.length,
      createdCollectionAutomatically: created,
      ...(added === 0 ? { note: 'all indexes already exist' } : {}),
      ok: 1,
    };
  }

  private listIndexes({ db, command }: CommandContext): Document {
    rejectUnknownOptions(command, ['cursor']);
    const name = stringArg(command, 'listIndexes');
    const collection = this.existing(db, name);
    if (!collection) throw namespaceNotFound(`ns does not exist: ${db}.${name}`);
    const docs = collection.indexes.map((spec) => ({ v: 2, ...spec }));
    return this.openCursor(`${db}.${name}`, docs, undefined, false);
  }

  private dropIndexes({ db, command }: CommandContext): Document {
    rejectUnknownOptions(command, ['index']);
    const name = stringArg(command, 'dropIndexes');
    const collection = this.existing(db, name);
    if (!collection) throw namespaceNotFound(`ns not found ${db}.${name}`);
    const before = collection.indexes.length;
    if (command.index === '*') {
      for (const spec of collection.indexes.slice(1)) collection.dropIndex(spec.name);
    } else if (typeof command.index === 'string') {
      collection.dropIndex(command.index);
    } else {
      throw notModelled('dropping an index by key pattern');
    }
    return { nIndexesWas: before, ok: 1 };
  }

  private listCollections({ db, command }: CommandContext): Document {
    rejectUnknownOptions(command, ['filter', 'nameOnly', 'authorizedCollections', 'cursor']);
    const infos = [...(this.databases.get(db)?.entries() ?? [])].map(([name, collection]) =>
      command.nameOnly === true
        ? { name, type: 'collection' }
        : {
            name,
            type: 'collection',
            options: collection.options,
            info: { readOnly: false, uuid: collection.uuid },
            idIndex: { v: 2, key: { _id: 1 }, name: '_id_' },
          },
    );
    const filter = command.filter as Document | undefined;
    const docs = filter ? infos.filter((info) => new Query(toView(filter) as Document).test(info)) : infos;
    return this.openCursor(`${db}.$cmd.listCollections`, docs, undefined, false);
  }

  private drop({ db, command }: CommandContext): Document {
    rejectUnknownOptions(command, []);
    const name = stringArg(command, 'drop');
    const collection = this.existing(db, name);
    // Since MongoDB 7.0 dropping a missing collection succeeds.
    if (!collection) return { ok: 1 };
    this.databases.get(db)!.delete(name);
    this.killCursorsOn(`${db}.${name}`, 'collection dropped');
    return { nIndexesWas: collection.indexes.length, ns: `${db}.${name}`, ok: 1 };
  }

  private dropDatabase({ db }: CommandContext): Document {
    for (const name of this.databases.get(db)?.keys() ?? [])
      this.killCursorsOn(`${db}.${name}`, 'database dropped');
    this.databases.delete(db);
    return { dropped: db, ok: 1 };
  }

  private renameCollection({ db, command }: CommandContext): Document {
    rejectUnknownOptions(command, ['to', 'dropTarget', 'stayTemp']);
    if (db !== 'admin') {
      throw new CommandError(
        13,
        'Unauthorized',
        'renameCollection may only be run against the admin database.',
      );
    }
    const [fromDb, fromName] = splitNamespace(stringArg(command, 'renameCollection'));
    const [toDb, toName] = splitNamespace(stringArg(command, 'to'));
    const source = this.existing(fromDb, fromName);
    if (!source) throw namespaceNotFound(`Source collection ${fromDb}.${fromName} does not exist`);
    if (fromDb === toDb && fromName === toName) {
      throw new CommandError(20, 'IllegalOperation', "Can't rename a collection to itself");
    }
    if (this.existing(toDb, toName)) {
      if (command.dropTarget !== true) throw namespaceExists('target namespace exists');
      this.databases.get(toDb)!.delete(toName);
      this.killCursorsOn(`${toDb}.${toName}`, 'collection dropped');
    }
    this.killCursorsOn(`${fromDb}.${fromName}`, 'collection renamed');
    this.databases.get(fromDb)!.delete(fromName);
    source.namespace = `${toDb}.${toName}`;
    this.database(toDb).set(toName, source);
    return { ok: 1 };
  }
}

const AGGREGATION_STAGES = new Set([
  '$match',
  '$sort',
  '$skip',
  '$limit',
  '$project',
  '$group',
  '$count',
  '$addFields',
  '$set',
  '$unset',
]);

const INDEX_OPTIONS = new Set([
  'key',
  'name',
  'unique',
  'sparse',
  'partialFilterExpression',
  'v',
  'background',
]);

function indexSpec(spec: Document): IndexSpec {
  for (const option of Object.keys(spec)) {
    if (!INDEX_OPTIONS.has(option)) throw notModelled(`the index option '${option}'`);
  }
  const key = spec.key as Document | undefined;
  if (!key || Object.keys(key).length === 0)
    throw failedToParse('index key pattern must be a non-empty object');
  for (const [field, direction] of Object.entries(key)) {
    const value = toView(direction);
    if (value !== 1 && value !== -1) throw notModelled(`index type ${String(value)} on '${field}'`);
  }
  if (typeof spec.name !== 'string') throw failedToParse('index name must be a string');
  return {
    name: spec.name,
    key,
    ...(spec.unique === true ? { unique: true } : {}),
    ...(spec.sparse === true ? { sparse: true } : {}),
    ...(spec.partialFilterExpression
      ? { partialFilterExpression: spec.partialFilterExpression as Document }
      : {}),
  };
}

function splitNamespace(namespace: string): [string, string] {
  const dot = namespace.indexOf('.');
  if (dot <= 0 || dot === namespace.length - 1) {
    throw new CommandError(73, 'InvalidNamespace', `Invalid namespace specified '${namespace}'`);
  }
  return [namespace.slice(0, dot), namespace.slice(dot + 1)];
}

/** Type-exact comparison, to count modified documents: int32 1 -> double 1.0 is a change. */
function sameDocument(a: StoredDocument, b: StoredDocument): boolean {
  return EJSON.stringify(a, { relaxed: false }) === EJSON.stringify(b, { relaxed: false });
}
