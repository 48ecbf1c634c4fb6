import Database from 'better-sqlite3';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENTS_FILE } from './events-schema';
import { SqliteEventStore } from './sqlite-event-store';
import { readStoreId, STORE_ID_FILE, StoreLostError } from './sqlite-store-identity';

describe('SqliteEventStore identity', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'store-identity-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const idIn = (path: string) => readFileSync(join(path, STORE_ID_FILE), 'utf8').trim();

  it('records one identity at creation, in events.db and beside it, and keeps it across opens', async () => {
    await SqliteEventStore.open(dir).close();
    const id = idIn(dir);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await SqliteEventStore.open(dir).close();
    expect(idIn(dir)).toBe(id);
  });

  it('keeps store-id private to the service user', async () => {
    await SqliteEventStore.open(dir).close();
    expect(statSync(join(dir, STORE_ID_FILE)).mode & 0o777).toBe(0o600);
  });

  it('completes a store-id a crash left empty from events.db', async () => {
    await SqliteEventStore.open(dir).close();
    const id = idIn(dir);
    truncateSync(join(dir, STORE_ID_FILE), 0);
    await SqliteEventStore.open(dir).close();
    expect(idIn(dir)).toBe(id);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('takes the identity store-id records for an events.db from before identities', async () => {
    await SqliteEventStore.open(dir).close();
    const recorded = '00000000-0000-4000-8000-000000000000';
    writeFileSync(join(dir, STORE_ID_FILE), `${recorded}\n`);
    const db = new Database(join(dir, EVENTS_FILE));
    db.exec('DELETE FROM store_identity');
    db.close();
    await SqliteEventStore.open(dir).close();
    const reopened = new Database(join(dir, EVENTS_FILE), { readonly: true });
    try {
      expect(reopened.prepare('SELECT store_id FROM store_identity').pluck().all()).toEqual([recorded]);
    } finally {
      reopened.close();
    }
    expect(idIn(dir)).toBe(recorded);
  });

  it('writes store-id again from events.db when only that was lost (a crash in between)', async () => {
    await SqliteEventStore.open(dir).close();
    const id = idIn(dir);
    rmSync(join(dir, STORE_ID_FILE));
    await SqliteEventStore.open(dir).close();
    expect(idIn(dir)).toBe(id);
  });

  it.each([
    ['missing', (file: string) => rmSync(file)],
    ['empty (0 bytes)', (file: string) => truncateSync(file, 0)],
  ])(
    'refuses an events.db that is %s beside a store-id, naming DATA_DIR and the file',
    async (what, lose) => {
      await SqliteEventStore.open(dir).close();
      const file = join(dir, EVENTS_FILE);
      for (const suffix of ['-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
      lose(file);
      expect(() => SqliteEventStore.open(dir)).toThrow(StoreLostError);
      expect(() => SqliteEventStore.open(dir)).toThrow(
        expect.objectContaining({
          name: 'StoreLostError',
          dataDir: dir,
          message:
            `DATA_DIR (${dir}): ${file} is ${what}, but store-id says store ${idIn(dir)} was created here. ` +
            'The event history is not where it was: restore it ' +
            `from a backup (\`restore DIR\`), or, to start an empty store on purpose, remove ${join(dir, STORE_ID_FILE)}.`,
        }),
      );
    },
  );

  it('reads store-id as absent only when there is none or it is empty; any other failure is thrown', () => {
    expect(readStoreId(dir)).toBeNull();
    writeFileSync(join(dir, STORE_ID_FILE), '');
    expect(readStoreId(dir)).toBeNull();
    writeFileSync(join(dir, STORE_ID_FILE), ' 00000000-0000-4000-8000-000000000000\n');
    expect(readStoreId(dir)).toBe('00000000-0000-4000-8000-000000000000');
    rmSync(join(dir, STORE_ID_FILE));
    mkdirSync(join(dir, STORE_ID_FILE));
    expect(() => readStoreId(dir)).toThrow(expect.objectContaining({ code: 'EISDIR' }));
  });

  it("refuses another store's events.db", async () => {
    await SqliteEventStore.open(dir).close();
    writeFileSync(join(dir, STORE_ID_FILE), '00000000-0000-4000-8000-000000000000\n');
    expect(() => SqliteEventStore.open(dir)).toThrow(/is store .* but store-id says store 00000000-/);
  });
});
