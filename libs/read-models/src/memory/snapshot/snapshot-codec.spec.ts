import { position } from '@chronicle/event-store';
import { DocumentChange } from '../../read-store.port';
import { MemoryReadStore } from '../memory-read-store';
import { decodeSnapshot, encodeSnapshot, SnapshotOrigin, SnapshotRejectedError } from './snapshot-codec';

const ORIGIN: SnapshotOrigin = { storeId: 'store-1', anchorEventId: 'event-at-9' };

async function filled(): Promise<MemoryReadStore> {
  const store = new MemoryReadStore();
  const changes: DocumentChange[] = [
    {
      collection: 'customers',
      id: 2,
      position: position(1),
      set: {
        id: 2,
        name: 'Ann "the" \\ one',
        email: 'ann@example.com',
        createdon: '2026-01-01T00:00:00.000Z',
      },
    },
    {
      collection: 'customers',
      id: 1,
      position: { commit: 3n, prepare: 2n },
      set: { id: 1, name: 'Zoë 😀', email: 'zoe@example.com', createdon: '2026-01-02T00:00:00Z' },
    },
    // A second change leaves garbage in the text heap.
    { collection: 'customers', id: 2, position: position(4), set: { name: 'Ann' } },
    {
      collection: 'users',
      id: 'u-2',
      position: position(5),
      set: { id: 'u-2', name: 'Bo', age: 40, createdon: '2026-01-03T00:00:00.000Z', revision: 0 },
    },
    {
      collection: 'users',
      id: 'u-1',
      position: position(6),
      set: { id: 'u-1', name: 'Al', age: 30, createdon: '2026-01-01T00:00:00.000Z', revision: 0 },
    },
    { collection: 'users', id: 'u-1', position: position(9), set: { age: 31, revision: 1 } },
  ];
  await store.applyBatch(changes, { projection: 'read-models', position: position(9) });
  return store;
}

async function encode(store: MemoryReadStore): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const bytes = await store.holdStill((image) =>
    encodeSnapshot(image, ORIGIN, (chunk) => {
      chunks.push(Buffer.from(chunk));
      return Promise.resolve();
    }),
  );
  const file = Buffer.concat(chunks);
  expect(file.byteLength).toBe(bytes);
  return file;
}

function source(file: Buffer) {
  return {
    size: file.byteLength,
    read: (into: Uint8Array, offset: number) => {
      if (offset + into.byteLength > file.byteLength) return Promise.reject(new Error('past the end'));
      into.set(file.subarray(offset, offset + into.byteLength));
      return Promise.resolve();
    },
  };
}

async function contents(store: MemoryReadStore) {
  const customers = [];
  for await (const doc of store.documents('customers')) customers.push(doc);
  return {
    customers,
    customersJson: (await store.listCustomersJson({ offset: 0, limit: 10 })).json.toString(),
    users: await store.listUsers({ offset: 0, limit: 10 }),
    checkpoint: await store.getCheckpoint('read-models'),
  };
}

describe('the read models snapshot codec', () => {
  it('reads back what it wrote: documents, list orders, positions and checkpoint', async () => {
    const original = await filled();
    const decoded = await decodeSnapshot(source(await encode(original)));
    expect(decoded.origin).toEqual(ORIGIN);

    const restored = new MemoryReadStore();
    expect(restored.restore(decoded.image, restored.generation)).toBe(true);

    expect(await contents(restored)).toEqual(await contents(original));
    // Positions came back too: an older change is still refused, a newer one applied.
    await restored.applyBatch(
      [
        { collection: 'customers', id: 1, position: { commit: 3n, prepare: 1n }, set: { name: 'old' } },
        { collection: 'users', id: 'u-1', position: position(10), set: { age: 32, revision: 2 } },
      ],
      { projection: 'read-models', position: position(10) },
    );
    expect((await restored.listCustomers({ offset: 0, limit: 1 })).items[0].name).toBe('Zoë 😀');
    expect((await restored.getUser('u-1'))?.age).toBe(32);
    // And the restored columns grow like any others.
    await restored.applyBatch(
      Array.from({ length: 2000 }, (_, i) => ({
        collection: 'customers' as const,
        id: 10 + i,
        position: position(11 + i),
        set: { id: 10 + i, name: `C${i}`, email: `c${i}@example.com`, createdon: '2026-01-01T00:00:00.000Z' },
      })),
      { projection: 'read-models', position: position(2011) },
    );
    expect((await restored.listCustomers({ offset: 0, limit: 0 })).total).toBe(2002);
  });

  it('reads back an empty store', async () => {
    const decoded = await decodeSnapshot(source(await encode(new MemoryReadStore())));
    const restored = new MemoryReadStore();
    expect(restored.restore(decoded.image, restored.generation)).toBe(true);
    expect((await restored.listCustomers({ offset: 0, limit: 10 })).total).toBe(0);
    await restored.applyBatch(
      [{ collection: 'customers', id: 1, position: position(1), set: { id: 1, name: 'A' } }],
      { projection: 'read-models', position: position(1) },
    );
    expect((await restored.listCustomers({ offset: 0, limit: 10 })).total).toBe(1);
  });

  it('rejects a file cut short at any point (a torn write)', async () => {
    const file = await encode(await filled());
    for (const length of [0, 5, 12, 40, file.byteLength - 33, file.byteLength - 1]) {
      await expect(decodeSnapshot(source(file.subarray(0, length)))).rejects.toThrow(SnapshotRejectedError);
    }
  });

  it('rejects a file with any byte changed', async () => {
    const file = await encode(await filled());
    for (const at of [20, Math.floor(file.byteLength / 2), file.byteLength - 40, file.byteLength - 1]) {
      const damaged = Buffer.from(file);
      damaged[at] ^= 0x01;
      await expect(decodeSnapshot(source(damaged))).rejects.toThrow(SnapshotRejectedError);
    }
  });

  it('rejects a file that is not a snapshot', async () => {
    const file = Buffer.from('SQLite format 3\0'.padEnd(200, '\0'), 'latin1');
    await expect(decodeSnapshot(source(file))).rejects.toThrow('it is not a snapshot');
  });
});

describe('MemoryReadStore snapshots', () => {
  it('holds batches back while a snapshot reads, and applies them after', async () => {
    const store = await filled();
    let release!: () => void;
    const reading = store.holdStill(() => new Promise<void>((resolve) => (release = resolve)));
    const applying = store.applyBatch(
      [{ collection: 'customers', id: 3, position: position(10), set: { id: 3, name: 'C' } }],
      { projection: 'read-models', position: position(10) },
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(await store.getCheckpoint('read-models')).toEqual(position(9));
    release();
    await reading;
    await applying;
    expect(await store.getCheckpoint('read-models')).toEqual(position(10));
  });

  it('restores only into a store that has applied and adopted nothing since', async () => {
    const image = (await decodeSnapshot(source(await encode(await filled())))).image;
    const applied = new MemoryReadStore();
    await applied.applyBatch([], { projection: 'read-models', position: position(1) });
    expect(applied.restore(image, applied.generation)).toBe(false);

    const adopted = new MemoryReadStore();
    const generation = adopted.generation;
    expect(adopted.adopt(new MemoryReadStore(), 'read-models')).toBe(true);
    expect(adopted.restore(image, generation)).toBe(false);
    expect((await adopted.listCustomers({ offset: 0, limit: 10 })).total).toBe(0);
  });

  it('refuses columns that apply() could not have built, changing nothing', async () => {
    const image = (await decodeSnapshot(source(await encode(await filled())))).image;
    image.customers.ids.reverse();
    const store = new MemoryReadStore();
    expect(() => store.restore(image, store.generation)).toThrow(RangeError);
    expect(await store.getCheckpoint('read-models')).toBeNull();
  });
});
