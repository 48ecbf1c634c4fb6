import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoDouble, startMongoDouble } from '../../doubles/mongo/mongo-double';

/** Opens two instances of an adapter on one new store, as two server processes share it. */
export type OpenInstances<T> = () => Promise<[T, T]>;

interface Closable {
  close(): Promise<void>;
}

/** Two instances on a new SQLite DATA_DIR (under `prefix`), which goes when the first is closed. */
export function onSqlite<T extends Closable>(prefix: string, open: (dataDir: string) => T): OpenInstances<T> {
  return () => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    const first = open(dir);
    const second = open(dir);
    const close = first.close.bind(first);
    first.close = async () => {
      await close();
      rmSync(dir, { recursive: true, force: true });
    };
    return Promise.resolve([first, second]);
  };
}

/**
 * A MongoDB double for the calling file's suites (started before them, stopped after them), and
 * two instances on a database of their own per open (`<prefix><n>`). `uriOf` names any other
 * database on the double.
 */
export function onMongoDouble<T>(
  prefix: string,
  open: (uri: string) => T,
): { open: OpenInstances<T>; uriOf(database: string): string } {
  let mongo: MongoDouble;
  let databases = 0;
  beforeAll(async () => {
    mongo = await startMongoDouble();
  });
  afterAll(() => mongo.stop());
  const uriOf = (database: string) => {
    const uri = new URL(mongo.uri);
    uri.pathname = `/${database}`;
    return uri.toString();
  };
  return {
    open: () => {
      const uri = uriOf(`${prefix}${++databases}`);
      return Promise.resolve([open(uri), open(uri)]);
    },
    uriOf,
  };
}
