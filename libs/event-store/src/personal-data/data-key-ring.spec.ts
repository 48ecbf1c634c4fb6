import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDataKeyStore } from '../embedded/sqlite-data-key-store';
import { DataKeyRing } from './data-key-ring';
import { DataSubject, subjectName } from './data-key-store.port';

const SECRET = Buffer.from('the data key secret of the ring spec, long enough');
const subject = (id: number): DataSubject => ({ kind: 'customer', id: String(id) });

describe('DataKeyRing', () => {
  let dir: string;
  let store: SqliteDataKeyStore;
  let now: number;
  let ring: DataKeyRing;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'key-ring-'));
    store = new SqliteDataKeyStore(dir, SECRET);
    now = 1_000;
    ring = new DataKeyRing(store, { erasurePollMs: 1_000, maxEntries: 3, now: () => now });
  });

  afterEach(async () => {
    await ring.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes the keys asked for in one turn in one call to the store, and hands each out as a KeyObject', async () => {
    const createMany = jest.spyOn(store, 'createMany');
    const [first, second] = await Promise.all([
      ring.forWriting([subject(1), subject(2)]),
      ring.forWriting([subject(2), subject(3)]),
    ]);
    expect(createMany).toHaveBeenCalledTimes(1);
    expect(createMany.mock.calls[0][0].map(subjectName).sort()).toEqual([
      'customer-1',
      'customer-2',
      'customer-3',
    ]);
    const key = first.get('customer-2')!;
    expect(key.state).toBe('active');
    expect(second.get('customer-2')).toBe(key);
    if (key.state === 'active') {
      expect(key.key.type).toBe('secret');
      expect(key.key.export().equals(await store.create(subject(2)))).toBe(true);
    }
  });

  it('keeps a key in memory, and asks the store only which keys were destroyed, once per poll interval', async () => {
    await ring.forWriting([subject(1)]);
    const getMany = jest.spyOn(store, 'getMany');
    const destroyedSince = jest.spyOn(store, 'destroyedSince');
    await ring.forReading([subject(1)]);
    await ring.forWriting([subject(1)]);
    expect(destroyedSince).not.toHaveBeenCalled();
    now += 1_001;
    // Many reads in one turn share one poll; the key itself is not read again.
    await Promise.all([
      ring.forReading([subject(1)]),
      ring.forWriting([subject(1)]),
      ring.forReading([subject(1)]),
    ]);
    expect(destroyedSince).toHaveBeenCalledTimes(1);
    expect(getMany).not.toHaveBeenCalled();
    await ring.forReading([subject(1)]);
    expect(destroyedSince).toHaveBeenCalledTimes(1);
  });

  it('writes under a key made elsewhere by reading it, and takes the write lock only to make a new one', async () => {
    const made = await new DataKeyRing(store).forWriting([subject(1)]);
    const createMany = jest.spyOn(store, 'createMany');
    const getMany = jest.spyOn(store, 'getMany');
    const [again, fresh] = await Promise.all([ring.forWriting([subject(1)]), ring.forWriting([subject(2)])]);
    // One read for the turn's batch; only the subject with no key yet is made.
    expect(getMany).toHaveBeenCalledTimes(1);
    expect(createMany).toHaveBeenCalledTimes(1);
    expect(createMany.mock.calls[0][0]).toEqual([subject(2)]);
    const [before, after] = [made.get('customer-1')!, again.get('customer-1')!];
    expect(before.state === 'active' && after.state === 'active' && after.key.equals(before.key)).toBe(true);
    expect(fresh.get('customer-2')?.state).toBe('active');
  });

  it('drops every key it holds when a poll meets more erasures than it reads at once', async () => {
    await ring.forWriting([subject(1)]);
    jest.spyOn(store, 'destroyedSince').mockImplementation(async (_since, limit) =>
      Array.from({ length: limit }, (_, at) => ({
        subject: subject(100 + at),
        erasedAt: '2026-11-27T00:00:00.000Z',
      })),
    );
    const getMany = jest.spyOn(store, 'getMany');
    now += 1_001;
    expect((await ring.forReading([subject(1)])).get('customer-1')?.state).toBe('active');
    expect(getMany).toHaveBeenCalledTimes(1);
  });

  it("sees another instance's erasure once the key's time is up, and its own at once, for good", async () => {
    const other = new DataKeyRing(new SqliteDataKeyStore(dir, SECRET), { now: () => now });
    await ring.forWriting([subject(1), subject(2)]);
    await other.destroy({ subject: subject(1), erasedAt: '2026-11-27T00:00:00.000Z' });
    expect((await ring.forReading([subject(1)])).get('customer-1')?.state).toBe('active');
    now += 1_001;
    expect((await ring.forReading([subject(1)])).get('customer-1')?.state).toBe('erased');

    await ring.destroy({ subject: subject(2), erasedAt: '2026-11-27T00:00:01.000Z' });
    const getMany = jest.spyOn(store, 'getMany');
    now += 1e9;
    expect((await ring.forReading([subject(2)])).get('customer-2')).toEqual({
      state: 'erased',
      erasure: { subject: subject(2), erasedAt: '2026-11-27T00:00:01.000Z' },
    });
    expect(getMany).not.toHaveBeenCalled();
    await other.close();
  });

  it('keeps at most maxEntries keys in memory, the oldest out first', async () => {
    await ring.forWriting([subject(1), subject(2), subject(3), subject(4)]);
    const getMany = jest.spyOn(store, 'getMany');
    await ring.forReading([subject(2), subject(3), subject(4)]);
    expect(getMany).not.toHaveBeenCalled();
    await ring.forReading([subject(1)]);
    expect(getMany.mock.calls.map(([asked]) => asked.map(subjectName))).toEqual([['customer-1']]);
  });

  it('answers nothing for a subject that has neither a key nor an erasure, and remembers nothing of it', async () => {
    expect((await ring.forReading([subject(9)])).size).toBe(0);
    expect(await store.get(subject(9))).toBeNull();
  });
});
