import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENTS_FILE, SqliteEventStore, STORE_ID_FILE, StoreLostError } from './sqlite-event-store';

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
      expect(() => SqliteEventStore.open(dir)).toThrow(`DATA_DIR (${dir}): ${file} is ${what}`);
    },
  );

  it("refuses another store's events.db", async () => {
    await SqliteEventStore.open(dir).close();
    writeFileSync(join(dir, STORE_ID_FILE), '00000000-0000-4000-8000-000000000000\n');
    expect(() => SqliteEventStore.open(dir)).toThrow(/is store .* but store-id says store 00000000-/);
  });
});
