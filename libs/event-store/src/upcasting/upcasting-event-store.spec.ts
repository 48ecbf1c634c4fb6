import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../embedded';
import { NewEvent, RecordedEvent, SubscriptionMessage } from '../event-store.port';
import { UpcasterRegistry, Upcaster } from './upcaster-registry';
import { UpcastingEventStore } from './upcasting-event-store';

const metadata = {
  actor: 'system',
  correlationId: 'c',
  causationId: null,
  occurredAt: '2026-01-01T00:00:00.000Z',
};
const event = (type: string, data: Record<string, unknown>, id = `${type}-${Math.random()}`): NewEvent => ({
  id,
  type,
  data,
  metadata,
});

const v1ToV2: Upcaster = { from: 'Thing.v1', to: 'Thing.v2', upcast: (data) => ({ ...data, size: 'small' }) };
const v2ToV3: Upcaster = {
  from: 'Thing.v2',
  to: 'Thing.v3',
  upcast: ({ size, ...rest }) => ({ ...rest, sizes: [size] }),
};

describe('UpcasterRegistry', () => {
  const recorded = (type: string, data: Record<string, unknown>): RecordedEvent => ({
    ...event(type, data, 'e-1'),
    stream: 'thing-1',
    revision: 0,
    position: { commit: 1n, prepare: 1n },
    recordedAt: '2026-01-01T00:00:00.000Z',
    hash: 'a'.repeat(64),
  });

  it('upcasts step by step to the newest version, keeping stream, position and metadata', () => {
    const registry = new UpcasterRegistry([v2ToV3, v1ToV2]);
    const stored = recorded('Thing.v1', { name: 'x' });
    expect(registry.upcast(stored)).toEqual({
      ...stored,
      type: 'Thing.v3',
      data: { name: 'x', sizes: ['small'] },
    });
    expect(registry.upcast(recorded('Thing.v2', { size: 'big' })).data).toEqual({ sizes: ['big'] });
  });

  it('returns an event no upcaster reads as it is', () => {
    const stored = recorded('Other.v1', { a: 1 });
    expect(new UpcasterRegistry([v1ToV2]).upcast(stored)).toBe(stored);
  });

  it('names the stored types that read as the wanted ones', () => {
    const registry = new UpcasterRegistry([v2ToV3, v1ToV2]);
    expect(registry.storedTypesOf(['Thing.v3', 'Other.v1']).sort()).toEqual(
      ['Other.v1', 'Thing.v1', 'Thing.v2', 'Thing.v3'].sort(),
    );
    // Thing.v2 is always read as Thing.v3: nothing is ever delivered as Thing.v2.
    expect(registry.storedTypesOf(['Thing.v2'])).toEqual([]);
  });

  it('refuses two upcasters for one type, a type mapped to itself, and a loop', () => {
    expect(() => new UpcasterRegistry([v1ToV2, { ...v1ToV2, to: 'Thing.v9' }])).toThrow(/Two upcasters/);
    expect(() => new UpcasterRegistry([{ ...v1ToV2, to: 'Thing.v1' }])).toThrow(/itself/);
    expect(() => new UpcasterRegistry([v1ToV2, { ...v2ToV3, to: 'Thing.v1' }])).toThrow(/loop/);
  });
});

describe('UpcastingEventStore', () => {
  let dir: string;
  let inner: SqliteEventStore;
  let store: UpcastingEventStore;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chronicle-upcasting-'));
    inner = SqliteEventStore.open(dir, { pollIntervalMs: 10 });
    store = new UpcastingEventStore(inner, new UpcasterRegistry([v1ToV2]));
    // Stored by an older writer: the store itself keeps the old version.
    await inner.append('thing-1', [event('Thing.v1', { name: 'old' })], 'no_stream');
    await store.append('thing-1', [event('Thing.v2', { name: 'new', size: 'big' })], 0);
  });

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const shapes = (events: RecordedEvent[]) => events.map(({ type, data }) => ({ type, data }));
  const expected = [
    { type: 'Thing.v2', data: { name: 'old', size: 'small' } },
    { type: 'Thing.v2', data: { name: 'new', size: 'big' } },
  ];

  it('stores what it is given: no event is rewritten', async () => {
    expect(shapes(await inner.readStream('thing-1')).map((e) => e.type)).toEqual(['Thing.v1', 'Thing.v2']);
  });

  it('reads as stored through asStored(): the adapter itself, no upcasting', async () => {
    expect(store.asStored()).toBe(inner);
    expect(inner.asStored()).toBe(inner);
    const raw: RecordedEvent[] = [];
    for await (const recorded of store.asStored().readAll({ eventTypes: ['Thing.v1'] })) raw.push(recorded);
    expect(shapes(raw)).toEqual([{ type: 'Thing.v1', data: { name: 'old' } }]);
  });

  it('upcasts readStream', async () => {
    expect(shapes(await store.readStream('thing-1'))).toEqual(expected);
  });

  it('upcasts readAll', async () => {
    const events: RecordedEvent[] = [];
    for await (const recorded of store.readAll()) events.push(recorded);
    expect(shapes(events)).toEqual(expected);
  });

  it('leaves out of readAll the older stored versions of a type left out, and keeps the others', async () => {
    await inner.append('other-1', [event('Other.v1', {})], 'no_stream');
    const kept: RecordedEvent[] = [];
    for await (const recorded of store.readAll({ exceptTypes: ['Thing.v2'] })) kept.push(recorded);
    expect(kept.map((e) => e.type)).toEqual(['Other.v1']);
    const wanted: RecordedEvent[] = [];
    for await (const recorded of store.readAll({ eventTypes: ['Thing.v2'] })) wanted.push(recorded);
    expect(shapes(wanted)).toEqual(expected);
  });

  it('upcasts subscriptions, history and live', async () => {
    const subscription = store.subscribeToAll();
    const seen: SubscriptionMessage[] = [];
    for await (const message of subscription) {
      seen.push(message);
      if (message.kind === 'caught-up')
        await inner.append('thing-2', [event('Thing.v1', { name: 'live' })], 'no_stream');
      if (seen.length === 4) break;
    }
    expect(
      seen.map((m) => (m.kind === 'event' ? { type: m.event.type, data: m.event.data } : m.kind)),
    ).toEqual([...expected, 'caught-up', { type: 'Thing.v2', data: { name: 'live', size: 'small' } }]);
    await subscription.close();
  });

  it('feeds a filtered subscription the older stored versions of a wanted type, upcast', async () => {
    await inner.append('other-1', [event('Other.v1', {})], 'no_stream');
    const subscription = store.subscribeToAll({ eventTypes: ['Thing.v2'] });
    const seen: SubscriptionMessage[] = [];
    for await (const message of subscription) {
      seen.push(message);
      if (message.kind === 'caught-up') break;
    }
    expect(
      seen.map((m) => (m.kind === 'event' ? { type: m.event.type, data: m.event.data } : m.kind)),
    ).toEqual([...expected, 'checkpoint', 'caught-up']);
    await subscription.close();
  });

  it('passes head position and ping through', async () => {
    expect(await store.headPosition()).toEqual(await inner.headPosition());
    await expect(store.ping()).resolves.toBeUndefined();
  });

  it('reads the older stored versions of a wanted type too, upcast, in readAll and queryLog', async () => {
    await inner.append('other-1', [event('Other.v1', {})], 'no_stream');
    const events: RecordedEvent[] = [];
    for await (const recorded of store.readAll({ eventTypes: ['Thing.v2'] })) events.push(recorded);
    expect(shapes(events)).toEqual(expected);

    const page = await store.queryLog({ limit: 10, eventTypes: ['Thing.v2'] });
    expect(shapes(page.events)).toEqual(expected);
    expect(page.next).toBeNull();
  });
});
