import { createHash } from 'node:crypto';
import { endianness } from 'node:os';
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
    // Read into growable columns: the store grows them in place, not by copying.
    const { customers } = decoded.image;
    for (const column of [customers.ids, customers.created, customers.commits, customers.textStart]) {
      expect(column.buffer.resizable).toBe(true);
    }
    expect(
      [customers.nameBytes, customers.emailBytes, customers.heap].map((c) => c.buffer.resizable),
    ).toEqual([true, true, true]);

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

/** A snapshot's header and the sections after it, to be put together again with a valid digest. */
function split(file: Buffer): { header: Record<string, unknown>; body: Buffer } {
  const headerLength = file.readUInt32LE(8);
  return {
    header: JSON.parse(file.subarray(12, 12 + headerLength).toString('utf8')) as Record<string, unknown>,
    body: file.subarray(12 + headerLength, file.byteLength - 32),
  };
}

function assemble(header: unknown, body: Buffer): Buffer {
  const headerBytes = Buffer.from(typeof header === 'string' ? header : JSON.stringify(header), 'utf8');
  const prefix = Buffer.alloc(12);
  Buffer.from('CHRNSNAP', 'latin1').copy(prefix);
  prefix.writeUInt32LE(headerBytes.byteLength, 8);
  const contents = Buffer.concat([prefix, headerBytes, body]);
  return Buffer.concat([contents, createHash('sha256').update(contents).digest()]);
}

/** Why decodeSnapshot rejects a file. */
async function rejection(file: Buffer): Promise<string> {
  const error = await decodeSnapshot(source(file)).then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(SnapshotRejectedError);
  expect((error as Error).name).toBe('SnapshotRejectedError');
  return (error as Error).message;
}

describe('the snapshot file format', () => {
  let file: Buffer;

  beforeAll(async () => {
    file = await encode(await filled());
  });

  it('opens with CHRNSNAP and its header length, and ends with the SHA-256 of all before it', () => {
    const headerLength = file.readUInt32LE(8);
    expect(file.subarray(0, 8).toString('latin1')).toBe('CHRNSNAP');
    expect(file.subarray(-32)).toEqual(createHash('sha256').update(file.subarray(0, -32)).digest());
    const { header } = split(file);
    expect(headerLength).toBe(Buffer.byteLength(JSON.stringify(header)));
    expect(header).toMatchObject({
      format: 1,
      endianness: endianness(),
      storeId: 'store-1',
      anchorEventId: 'event-at-9',
      checkpoints: [['read-models', '9', '9']],
      customers: 2,
      prepares: [[1, '2']],
      irregularCreated: [[1, '2026-01-02T00:00:00Z']],
      users: 2,
    });
    // The columns (8 + 8 + 8 + 4 + 4 + 4 bytes a customer), the heap, then the users.
    expect(file.byteLength).toBe(
      12 + headerLength + 2 * 36 + (header.heapBytes as number) + (header.usersBytes as number) + 32,
    );
    expect(file.subarray(-32 - (header.usersBytes as number), -32).toString('utf8')).toBe(
      JSON.stringify([
        ['u-1', { name: 'Al', age: 31, createdon: '2026-01-01T00:00:00.000Z', revision: 1 }, '9', '9'],
        ['u-2', { name: 'Bo', age: 40, createdon: '2026-01-03T00:00:00.000Z', revision: 0 }, '5', '5'],
      ]),
    );
  });

  it('says when it was written', async () => {
    const before = new Date().toISOString();
    const written = await encode(new MemoryReadStore());
    const after = new Date().toISOString();

    const { writtenAt } = await decodeSnapshot(source(written));
    expect(writtenAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(writtenAt >= before && writtenAt <= after).toBe(true);
    expect(split(written).header.writtenAt).toBe(writtenAt);
  });

  it('keeps no anchor when the checkpoint names no event', async () => {
    const chunks: Uint8Array[] = [];
    await new MemoryReadStore().holdStill((image) =>
      encodeSnapshot(image, { storeId: 's', anchorEventId: null }, (chunk) => {
        chunks.push(Buffer.from(chunk));
        return Promise.resolve();
      }),
    );
    const decoded = await decodeSnapshot(source(Buffer.concat(chunks)));
    expect(decoded.origin).toEqual({ storeId: 's', anchorEventId: null });
    expect(decoded.image.checkpoints).toEqual([]);
    expect(decoded.image.userCount).toBe(0);
  });

  it.each([
    [10_000, 'two chunks of 5,000 exactly'],
    [5_001, 'a chunk of 5,000 and one more'],
  ])('writes and reads back %d users, %s, in order', async (count) => {
    const store = new MemoryReadStore();
    const ids = Array.from({ length: count }, (_, i) => `u-${String(i).padStart(5, '0')}`);
    await store.applyBatch(
      ids.map((id, i) => ({ collection: 'users', id, position: position(i + 1), set: { name: id } })),
      { projection: 'read-models', position: position(ids.length) },
    );

    const decoded = await decodeSnapshot(source(await encode(store)));

    expect(decoded.image.userCount).toBe(count);
    expect([...decoded.image.users].map(([id]) => id)).toEqual(ids);
  });

  it('hashes a heap larger than one hashing chunk of 4 MiB', async () => {
    const store = new MemoryReadStore();
    const name = 'n'.repeat(5000);
    await store.applyBatch(
      Array.from({ length: 1000 }, (_, i) => ({
        collection: 'customers' as const,
        id: i,
        position: position(i + 1),
        set: { name: `${name}${i}` },
      })),
      { projection: 'read-models', position: position(1000) },
    );
    const written = await encode(store);
    expect(split(written).header.heapBytes).toBeGreaterThan(4 * 1024 * 1024);

    const restored = new MemoryReadStore();
    expect(restored.restore((await decodeSnapshot(source(written))).image, 0)).toBe(true);
    expect((await restored.listCustomers({ offset: 999, limit: 1 })).items).toEqual([
      { id: 999, name: `${name}999` },
    ]);
    // A byte changed in the second chunk is noticed.
    const damaged = Buffer.from(written);
    damaged[damaged.byteLength - 100_000] ^= 1;
    expect(await rejection(damaged)).toBe('its digest does not match its contents');
  });

  it.each([0, 43])('rejects %i bytes as too short', async (length) => {
    expect(await rejection(Buffer.alloc(length))).toBe(
      `it is ${length} bytes, too short to be a snapshot (torn?)`,
    );
  });

  it('reads the prefix of a file of 44 bytes, the least a snapshot can be', async () => {
    expect(await rejection(Buffer.alloc(44))).toBe('it is not a snapshot');
  });

  it('rejects a header length the file cannot hold', async () => {
    const prefix = Buffer.from(file.subarray(0, 12));
    const headerLength = file.readUInt32LE(8);
    prefix.writeUInt32LE(file.byteLength - 12 - 32 + 1, 8);
    expect(await rejection(Buffer.concat([prefix, file.subarray(12)]))).toBe(
      `its header length (${file.byteLength - 12 - 32 + 1}) does not fit the file (torn?)`,
    );
    // Exactly up to the digest is not refused as a length: the header is then not JSON.
    prefix.writeUInt32LE(file.byteLength - 12 - 32, 8);
    expect(await rejection(Buffer.concat([prefix, file.subarray(12)]))).toBe('its header is not JSON');
    expect(headerLength).toBeLessThan(file.byteLength);
  });

  it('rejects a header longer than 64 MiB without reading it, whatever the file size', async () => {
    const prefix = Buffer.alloc(12);
    Buffer.from('CHRNSNAP', 'latin1').copy(prefix);
    prefix.writeUInt32LE(64 * 1024 * 1024 + 1, 8);
    const reads: number[] = [];
    const huge = {
      size: 2 ** 30,
      read: (into: Uint8Array, offset: number) => {
        reads.push(into.byteLength);
        if (offset === 0) into.set(prefix);
        return Promise.resolve();
      },
    };

    await expect(decodeSnapshot(huge)).rejects.toThrow(
      new SnapshotRejectedError('its header length (67108865) does not fit the file (torn?)'),
    );
    expect(reads).toEqual([12]);
  });

  it.each([
    ['another format', { format: 2 }, 'its format (2) is not 1'],
    ['no format', { format: undefined }, 'its format (undefined) is not 1'],
    [
      'the other byte order',
      { endianness: endianness() === 'LE' ? 'BE' : 'LE' },
      `it was written with ${endianness() === 'LE' ? 'BE' : 'LE'} byte order`,
    ],
    ['a negative customer count', { customers: -1 }, 'its header holds a bad section size'],
    ['a fractional heap size', { heapBytes: 1.5 }, 'its header holds a bad section size'],
    ['a user count that is text', { users: '2' }, 'its header holds a bad section size'],
    ['no users size', { usersBytes: undefined }, 'its header holds a bad section size'],
    ['no store id', { storeId: 7 }, 'its header is incomplete'],
    ['an anchor that is not text', { anchorEventId: 9 }, 'its header is incomplete'],
    ['no checkpoints', { checkpoints: {} }, 'its header is incomplete'],
    ['no prepares', { prepares: null }, 'its header is incomplete'],
    ['no irregular timestamps', { irregularCreated: 'none' }, 'its header is incomplete'],
  ])('rejects a header with %s', async (_, change, message) => {
    const { header, body } = split(file);
    expect(await rejection(assemble({ ...header, ...change }, body))).toBe(message);
  });

  it.each([
    ['null', 'its format (undefined) is not 1'],
    ['7', 'its format (undefined) is not 1'],
    ['{"format":1', 'its header is not JSON'],
  ])('rejects the header %s', async (header, message) => {
    expect(await rejection(assemble(header, split(file).body))).toBe(message);
  });

  it('rejects a file whose size is not the one its header implies', async () => {
    const { header, body } = split(file);
    const longer = assemble(header, Buffer.concat([body, Buffer.from('x')]));
    expect(await rejection(longer)).toBe(
      `it is ${longer.byteLength} bytes where its header says ${longer.byteLength - 1} (torn?)`,
    );
  });

  it.each([
    [
      'a checkpoint commit',
      (header: Record<string, unknown>) => ({ ...header, checkpoints: [['read-models', 'x9', '9']] }),
      'x9:9',
    ],
    [
      'a checkpoint prepare',
      (header: Record<string, unknown>) => ({ ...header, checkpoints: [['read-models', '9', '']] }),
      '9:',
    ],
    [
      'a position past 20 digits',
      (header: Record<string, unknown>) => ({
        ...header,
        checkpoints: [['read-models', '1'.repeat(21), '9']],
      }),
      `${'1'.repeat(21)}:9`,
    ],
  ])('rejects %s that is not a decimal', async (_, change, shown) => {
    const { header, body } = split(file);
    expect(await rejection(assemble(change(header), body))).toBe(`it holds a malformed position ${shown}`);
  });

  it.each([
    ['x9', 'x9'],
    ['a prepare past 20 digits', '1'.repeat(21)],
  ])('rejects a checkpoint prepare %s', async (_, prepare) => {
    const { header, body } = split(file);
    const changed = { ...header, checkpoints: [['read-models', '9', prepare]] };
    expect(await rejection(assemble(changed, body))).toBe(`it holds a malformed position 9:${prepare}`);
  });

  it('reads a header of 64 MiB exactly (the most there can be)', async () => {
    const prefix = Buffer.alloc(12);
    Buffer.from('CHRNSNAP', 'latin1').copy(prefix);
    prefix.writeUInt32LE(64 * 1024 * 1024, 8);
    const huge = {
      size: 2 ** 30,
      read: (into: Uint8Array, offset: number) => {
        if (offset === 0) into.set(prefix);
        return Promise.resolve();
      },
    };
    await expect(decodeSnapshot(huge)).rejects.toThrow(new SnapshotRejectedError('its header is not JSON'));
  });

  it('reads a position of 20 digits', async () => {
    const { header, body } = split(file);
    const max = (2n ** 64n - 1n).toString();
    const decoded = await decodeSnapshot(
      source(assemble({ ...header, checkpoints: [['read-models', max, max]] }, body)),
    );
    expect(decoded.image.checkpoints).toEqual([
      ['read-models', { commit: 2n ** 64n - 1n, prepare: 2n ** 64n - 1n }],
    ]);
  });

  it.each([
    ['fewer users than its header counts', (users: unknown[]) => users.slice(1)],
    ['no list of users', () => ({ users: [] })],
  ])('rejects a users section with %s', async (_, change) => {
    const { header, body } = split(file);
    const usersBytes = header.usersBytes as number;
    const users = Buffer.from(
      JSON.stringify(change(JSON.parse(body.subarray(-usersBytes).toString('utf8')) as unknown[])),
      'utf8',
    );
    const rewritten = assemble(
      { ...header, usersBytes: users.byteLength },
      Buffer.concat([body.subarray(0, body.byteLength - usersBytes), users]),
    );
    expect(await rejection(rewritten)).toBe('its users section does not hold the users its header counts');
  });

  it('checks the digest before it reads the users', async () => {
    const { header, body } = split(file);
    const usersBytes = header.usersBytes as number;
    const damaged = assemble(header, body);
    // The users section's first byte, under an intact digest of the original.
    damaged[damaged.byteLength - 32 - usersBytes] = 0x7b;
    expect(await rejection(damaged)).toBe('its digest does not match its contents');
  });
});
