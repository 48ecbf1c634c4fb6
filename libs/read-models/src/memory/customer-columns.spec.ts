import { CUSTOMER_FIELD_NAMES, customerRepresentation } from '@chronicle/domain';
import { position } from '@chronicle/event-store';
import { CustomerDocument } from '../read-store.port';
import { CustomerColumns } from './customer-columns';
import { canonicalTimestamp } from './json-bytes';

/** Deterministic pseudo-random numbers (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function readAll(columns: CustomerColumns): CustomerDocument[] {
  return Array.from({ length: columns.size }, (_, index) => columns.read(index));
}

describe('CustomerColumns', () => {
  it('matches a plain sorted model through growth, out-of-order inserts and updates', () => {
    const next = random(42);
    const columns = new CustomerColumns();
    const model = new Map<number, CustomerDocument>();
    for (let at = 1; at <= 20_000; at++) {
      const id = Math.floor(next() * 8_000);
      const existing = model.get(id);
      const name = `név ${at} ${'x'.repeat(Math.floor(next() * 30))}`;
      if (existing !== undefined && next() < 0.5) {
        columns.apply(id, position(at), { name });
        model.set(id, { ...existing, name });
      } else {
        const doc = {
          id,
          name,
          email: `c${at}@example.com`,
          createdon: new Date(1_700_000_000_000 + at * 1000).toISOString(),
        };
        columns.apply(id, position(at), doc);
        model.set(id, doc);
      }
    }

    const expected = [...model.values()].sort((a, b) => a.id - b.id);
    expect(readAll(columns)).toEqual(expected);
    for (const probe of [-1, 0, 1, 3_999, 4_000, 7_999, 8_000]) {
      expect(columns.lowerBound(probe)).toBe(expected.filter((doc) => doc.id < probe).length);
      expect(columns.upperBound(probe)).toBe(expected.filter((doc) => doc.id <= probe).length);
    }
  });

  it('appends increasing ids without moving earlier rows', () => {
    const columns = new CustomerColumns();
    for (let id = 1; id <= 5_000; id++) {
      columns.apply(id, position(id), {
        name: `n${id}`,
        email: `e${id}@x.io`,
        createdon: '2026-01-01T00:00:00.000Z',
      });
    }

    expect(columns.size).toBe(5_000);
    expect(columns.read(0)).toEqual({
      id: 1,
      name: 'n1',
      email: 'e1@x.io',
      createdon: '2026-01-01T00:00:00.000Z',
    });
    expect(columns.read(4_999).id).toBe(5_000);
  });

  it('grows its columns and text heap in place, leaving no old copy behind as garbage', () => {
    const columns = new CustomerColumns();
    const fill = (from: number, to: number) => {
      for (let id = from; id <= to; id++)
        columns.apply(id, position(id), { name: `name ${id}`, email: `${id}@x.io` });
    };
    fill(1, 10);
    const before = columns.image();
    // Past 1,024 rows and 64 KiB of text: several doublings of each.
    fill(11, 5_000);
    const after = columns.image();

    for (const key of [
      'ids',
      'created',
      'commits',
      'textStart',
      'nameBytes',
      'emailBytes',
      'heap',
    ] as const) {
      expect(after[key].buffer).toBe(before[key].buffer);
    }
    expect(after.heap.byteLength).toBeGreaterThan(64 * 1024);
    expect(columns.read(0)).toEqual({ id: 1, name: 'name 1', email: '1@x.io' });
    expect(columns.read(4_999)).toEqual({ id: 5_000, name: 'name 5000', email: '5000@x.io' });
  });

  it('reclaims the text of replaced names instead of growing without bound', () => {
    const columns = new CustomerColumns();
    columns.apply(1, position(1), { name: 'first', email: 'one@example.com' });
    for (let at = 2; at <= 100_000; at++) columns.apply(1, position(at), { name: `name number ${at}` });

    expect(columns.read(0)).toEqual({ id: 1, name: 'name number 100000', email: 'one@example.com' });
    expect(columns['heap'].length).toBeLessThanOrEqual(128 * 1024);
  });

  it('keeps a createdon that epoch milliseconds cannot reproduce exactly', () => {
    const columns = new CustomerColumns();
    columns.apply(1, position(1), { createdon: '2026-11-22T09:15:00Z' });
    columns.apply(2, position(2), { createdon: '2026-11-22T09:15:00.000Z' });
    columns.apply(3, position(3), { createdon: 'not a date' });

    expect(readAll(columns).map((doc) => doc.createdon)).toEqual([
      '2026-11-22T09:15:00Z',
      '2026-11-22T09:15:00.000Z',
      'not a date',
    ]);

    columns.apply(1, position(4), { createdon: '2027-01-01T00:00:00.000Z' });
    expect(columns.read(0).createdon).toBe('2027-01-01T00:00:00.000Z');
  });

  it('leaves out the fields a customer never had set, and tells empty text from absent', () => {
    const columns = new CustomerColumns();
    columns.apply(1, position(1), { email: 'only@example.com' });
    columns.apply(2, position(2), { name: '' });

    // Strict: a field never set is no key at all, not one holding undefined.
    expect(readAll(columns)).toStrictEqual([
      { id: 1, email: 'only@example.com' },
      { id: 2, name: '' },
    ]);
  });

  it('reports whether a change was applied by its position', () => {
    const columns = new CustomerColumns();

    expect(columns.apply(1, position(5, 3), { name: 'a' })).toBe(true);
    expect(columns.apply(1, position(5, 3), { name: 'b' })).toBe(false);
    expect(columns.apply(1, position(5, 2), { name: 'c' })).toBe(false);
    expect(columns.apply(1, position(5, 4), { name: 'd' })).toBe(true);
    expect(columns.apply(1, position(6), { name: 'e' })).toBe(true);
    expect(columns.apply(1, position(5, 5), { name: 'f' })).toBe(false);
    expect(columns.read(0).name).toBe('e');
  });
});

describe('CustomerColumns.renderJson', () => {
  /** What a serializer of read()'s documents would send: the bytes renderJson must equal. */
  const expectedJson = (columns: CustomerColumns, from: number, to: number) =>
    JSON.stringify(Array.from({ length: Math.max(0, to - from) }, (_, i) => columns.read(from + i)));

  it('holds and renders every declared customer field, in the declaration order', () => {
    const columns = new CustomerColumns();
    const doc = customerRepresentation({
      id: 9,
      name: 'Ada',
      email: 'ada@example.com',
      createdon: '2026-11-22T09:15:00.000Z',
    });
    columns.apply(doc.id, position(1), doc);

    expect(Object.keys(columns.read(0))).toEqual(['id', ...CUSTOMER_FIELD_NAMES]);
    expect(columns.renderJson(0, 1).toString('utf8')).toBe(JSON.stringify([doc]));
  });

  it('renders exactly the JSON of the documents, escapes and all', () => {
    const next = random(11);
    const awkward = [
      '"quoted"',
      'back\\slash',
      'tab\there',
      'nul\u0000',
      'é ü 日本',
      '😀',
      'lone \ud800',
      '\u2028',
      '',
    ];
    const columns = new CustomerColumns();
    for (let at = 1; at <= 3_000; at++) {
      const id = Math.floor(next() * 2 ** 40);
      const pick = () => awkward[Math.floor(next() * awkward.length)] + String(at);
      columns.apply(id, position(at), {
        name: pick(),
        email: pick(),
        createdon: new Date(Date.UTC(1000, 0, 1) + next() * 2.5e14).toISOString(),
      });
    }

    expect(columns.renderJson(0, columns.size).toString('utf8')).toBe(expectedJson(columns, 0, columns.size));
    expect(columns.renderJson(17, 117).toString('utf8')).toBe(expectedJson(columns, 17, 117));
    expect(JSON.parse(columns.renderJson(5, 6).toString('utf8'))).toEqual([columns.read(5)]);
  });

  it('renders rows far beyond the allowance per row: a long name alone, a long e-mail alone, a long odd createdon', () => {
    const columns = new CustomerColumns();
    columns.apply(1, position(1), { name: 'n'.repeat(2_000) });
    columns.apply(2, position(2), { email: `${'e'.repeat(2_000)}@x.io` });
    columns.apply(3, position(3), { createdon: `not a date ${'"'.repeat(1_000)}` });
    for (let index = 0; index < 3; index++) {
      expect(columns.renderJson(index, index + 1).toString('utf8')).toBe(
        expectedJson(columns, index, index + 1),
      );
    }
  });

  it('keeps lone surrogates as they were sent, at both ends of their range, and renders them escaped', () => {
    const columns = new CustomerColumns();
    const names = ['\ud800', 'x\udfffy', '\udbff', '\udc00z'];
    names.forEach((name, at) => columns.apply(at + 1, position(at + 1), { name, email: `${name}@x.io` }));

    expect(names.map((_, index) => columns.read(index))).toEqual(
      names.map((name, at) => ({ id: at + 1, name, email: `${name}@x.io` })),
    );
    expect(columns.renderJson(0, names.length).toString('utf8')).toBe(
      JSON.stringify(names.map((name, at) => ({ id: at + 1, name, email: `${name}@x.io` }))),
    );
  });

  it('renders absent fields, irregular timestamps, odd ids and empty ranges as the documents are', () => {
    const columns = new CustomerColumns();
    columns.apply(-7, position(1), { name: 'negative' });
    columns.apply(0, position(2), { email: 'zero@example.com', createdon: 'not "a" date' });
    columns.apply(2 ** 53 - 1, position(3), { name: '', createdon: '2026-11-22T09:15:00Z' });
    columns.apply(12, position(4), {});
    columns.apply(1.5, position(5), { name: 'fraction', createdon: '9999-12-31T23:59:59.999Z' });

    expect(columns.renderJson(0, columns.size).toString('utf8')).toBe(expectedJson(columns, 0, columns.size));
    expect(columns.renderJson(2, 2).toString('utf8')).toBe('[]');
  });

  it('writes every millisecond timestamp as toISOString() does', () => {
    const next = random(3);
    const columns = new CustomerColumns();
    const stamps = [Date.UTC(1000, 0, 1), Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(2000, 1, 29, 12)];
    for (let i = 0; i < 5_000; i++) stamps.push(Math.floor(Date.UTC(1000, 0, 1) + next() * 2.6e14));
    stamps.forEach((ms, id) =>
      columns.apply(id, position(id + 1), { createdon: new Date(ms).toISOString() }),
    );

    const rendered = JSON.parse(columns.renderJson(0, columns.size).toString('utf8')) as CustomerDocument[];
    expect(rendered.map((doc) => doc.createdon)).toEqual(stamps.map((ms) => new Date(ms).toISOString()));
  });
});

describe('canonicalTimestamp', () => {
  it('agrees with Date for timestamps in the form toISOString() writes', () => {
    const next = random(7);
    for (let i = 0; i < 10_000; i++) {
      const ms = Math.floor(
        Date.UTC(1000, 0, 1) + next() * (Date.UTC(9999, 11, 31, 23, 59, 59, 999) - Date.UTC(1000, 0, 1)),
      );
      expect(canonicalTimestamp(new Date(ms).toISOString())).toBe(ms);
    }
    expect(canonicalTimestamp('2024-02-29T23:59:59.999Z')).toBe(Date.UTC(2024, 1, 29, 23, 59, 59, 999));
    expect(canonicalTimestamp('2000-02-29T00:00:00.000Z')).toBe(Date.UTC(2000, 1, 29));
  });

  it.each([
    '2026-11-22T09:15:00Z',
    '2026-11-22T09:15:00.000+00:00',
    '2026-11-22 09:15:00.000Z',
    '+002026-11-22T09:15:00.000Z',
    '0999-12-31T23:59:59.999Z',
    '2026-02-29T00:00:00.000Z',
    '1900-02-29T00:00:00.000Z',
    '2026-04-31T00:00:00.000Z',
    '2026-13-01T00:00:00.000Z',
    '2026-00-01T00:00:00.000Z',
    '2026-11-00T00:00:00.000Z',
    '2026-11-22T24:00:00.000Z',
    '2026-11-22T09:60:00.000Z',
    '2026-11-22T09:15:60.000Z',
    '2026-11-22t09:15:00.000z',
  ])('refuses %s, which toISOString() would not give back', (text) => {
    expect(canonicalTimestamp(text)).toBeNull();
  });
});

describe('CustomerColumns images', () => {
  function filled(): CustomerColumns {
    const columns = new CustomerColumns();
    columns.apply(3, position(1), {
      name: 'Three',
      email: 'three@example.com',
      createdon: '2026-01-01T00:00:00.000Z',
    });
    columns.apply(1, { commit: 5n, prepare: 4n }, { name: 'One', createdon: 'not a date' });
    // A second write of customer 3's text leaves its first one behind as garbage.
    columns.apply(3, position(6), { name: 'Drei' });
    return columns;
  }

  it('shows its rows, text heap, prepares and irregular timestamps as they are', () => {
    const image = filled().image();

    expect(image.rows).toBe(2);
    expect([...image.ids]).toEqual([1, 3]);
    expect([...image.commits]).toEqual([5n, 6n]);
    expect(image.created[0]).toBeNaN();
    expect(image.created[1]).toBe(Date.UTC(2026, 0, 1));
    expect([...image.nameBytes]).toEqual([3, 4]);
    expect(image.emailBytes[0]).toBe(0xffffffff);
    expect(image.emailBytes[1]).toBe(17);
    for (const column of [image.ids, image.created, image.commits, image.textStart, image.nameBytes]) {
      expect(column).toHaveLength(2);
    }
    // The first record of 3 (zeroed when it was replaced), then 1's, then 3's second.
    expect(Buffer.from(image.heap).toString('utf8')).toBe(`${'\0'.repeat(22)}OneDreithree@example.com`);
    expect([...image.textStart]).toEqual([22, 25]);
    expect(image.prepares).toEqual([[1, '4']]);
    expect(image.irregularCreated).toEqual([[1, 'not a date']]);
  });

  it('is read back into columns that read, render and apply as the original', () => {
    const original = filled();
    const restored = CustomerColumns.fromImage(original.image());

    expect(restored.size).toBe(2);
    expect(readAll(restored)).toEqual(readAll(original));
    expect(restored.renderJson(0, 2).toString()).toBe(original.renderJson(0, 2).toString());
    // Positions, prepares included, still guard.
    expect(restored.apply(1, { commit: 5n, prepare: 4n }, { name: 'x' })).toBe(false);
    expect(restored.apply(1, { commit: 5n, prepare: 5n }, { name: 'Uno' })).toBe(true);
    expect(restored.apply(2, position(7), { name: 'Two' })).toBe(true);
    expect(readAll(restored).map((doc) => doc.name)).toEqual(['Uno', 'Two', 'Drei']);
  });

  it('counts the garbage it takes over, so that the heap is compacted, not doubled, when it fills', () => {
    const columns = new CustomerColumns();
    // 20 KB of live text written three times: two thirds of the heap are garbage.
    for (const letter of ['a', 'b', 'c']) {
      for (let id = 0; id < 20; id++)
        columns.apply(id, position(letter.charCodeAt(0) * 100 + id), {
          name: letter.repeat(1000),
        });
    }
    expect(columns.image().heap.byteLength).toBe(60_000);
    const image = columns.image();
    const restored = CustomerColumns.fromImage({ ...image, heap: image.heap.slice() });

    restored.apply(100, position(50_000), { name: 'd'.repeat(10_000) });

    // Compacted to the 20 KB of live text, then the new name: not 70 KB.
    expect(restored.image().heap.byteLength).toBe(30_000);
    expect(readAll(restored).map((doc) => doc.name)).toEqual([
      ...Array.from({ length: 20 }, () => 'c'.repeat(1000)),
      'd'.repeat(10_000),
    ]);
  });

  it('grows columns restored from fixed-size arrays, by moving them once into growable ones', () => {
    const image = filled().image();
    const fixed = CustomerColumns.fromImage({
      ...image,
      ids: image.ids.slice(),
      created: image.created.slice(),
      commits: image.commits.slice(),
      textStart: image.textStart.slice(),
      nameBytes: image.nameBytes.slice(),
      emailBytes: image.emailBytes.slice(),
      heap: image.heap.slice(),
    });
    for (let id = 10; id < 2_010; id++) fixed.apply(id, position(id), { name: `n${id}`.repeat(40) });
    const grown = fixed.image();
    fixed.apply(5_000, position(5_000), { name: 'last' });

    expect(fixed.image().ids.buffer.resizable).toBe(true);
    expect(fixed.image().ids.buffer).toBe(grown.ids.buffer);
    expect(readAll(fixed).slice(0, 2)).toEqual(readAll(filled()));
    expect(fixed.read(fixed.size - 2)).toEqual({ id: 2_009, name: 'n2009'.repeat(40) });
  });

  it('grows the columns of an image that holds no rows', () => {
    const restored = CustomerColumns.fromImage(new CustomerColumns().image());
    for (let id = 1; id <= 1500; id++) restored.apply(id, position(id), { name: `n${id}` });
    expect(restored.size).toBe(1500);
    expect(restored.read(1499)).toEqual({ id: 1500, name: 'n1500' });
  });

  it.each([
    [
      'columns of different lengths',
      (image: ReturnType<CustomerColumns['image']>) => ({ ...image, created: image.created.subarray(0, 1) }),
      'Customer columns differ in length',
    ],
    [
      'ids out of order',
      (image: ReturnType<CustomerColumns['image']>) => ({ ...image, ids: Float64Array.from([3, 1]) }),
      'Customer ids out of order at row 1',
    ],
    [
      'an id twice',
      (image: ReturnType<CustomerColumns['image']>) => ({ ...image, ids: Float64Array.from([3, 3]) }),
      'Customer ids out of order at row 1',
    ],
    [
      'an id that is not an integer',
      (image: ReturnType<CustomerColumns['image']>) => ({ ...image, ids: Float64Array.from([0.5, 3]) }),
      'Customer ids out of order at row 0',
    ],
    [
      'text beyond the heap',
      (image: ReturnType<CustomerColumns['image']>) => ({
        ...image,
        heap: image.heap.subarray(0, image.heap.byteLength - 1),
      }),
      'Customer 3: text beyond the heap',
    ],
  ])('refuses %s', (_, damage, message) => {
    expect(() => CustomerColumns.fromImage(damage(filled().image()))).toThrow(new RangeError(message));
  });

  it('takes a text that ends exactly at the end of the heap', () => {
    const image = filled().image();
    expect(() => CustomerColumns.fromImage(image)).not.toThrow();
    expect(image.textStart[1] + image.nameBytes[1] + image.emailBytes[1]).toBe(image.heap.byteLength);
  });
});

describe('CustomerColumns removal', () => {
  const at = (n: number) => ({ commit: BigInt(n), prepare: BigInt(n) });

  it('deletes a customer, leaving none of its text, past or present, in the heap or an image', () => {
    const columns = new CustomerColumns();
    columns.apply(1, at(1), {
      name: 'Keep Me',
      email: 'keep@example.com',
      createdon: '2026-01-01T00:00:00.000Z',
    });
    columns.apply(2, at(2), {
      name: 'Zoë Forget',
      email: 'forget@example.com',
      createdon: '2026-01-01T00:00:00.000Z',
    });
    columns.apply(2, at(3), { name: 'Zoë Renamed' });
    columns.apply(3, at(4), {
      name: 'Also Kept',
      email: 'also@example.com',
      createdon: '2026-01-01T00:00:00.000Z',
    });

    expect(columns.remove(2, at(2))).toBe(false);
    expect(columns.remove(2, at(5))).toBe(true);
    expect(columns.remove(2, at(6))).toBe(false);

    expect(columns.size).toBe(2);
    expect([0, 1].map((index) => columns.read(index).id)).toEqual([1, 3]);
    expect(JSON.parse(columns.renderJson(0, 2).toString())).toEqual([columns.read(0), columns.read(1)]);
    const heap = Buffer.from(columns.image().heap);
    for (const text of ['Zoë', 'Forget', 'Renamed', 'forget@example.com']) {
      expect(heap.includes(Buffer.from(text))).toBe(false);
    }
    expect(heap.includes(Buffer.from('keep@example.com'))).toBe(true);
  });
});
