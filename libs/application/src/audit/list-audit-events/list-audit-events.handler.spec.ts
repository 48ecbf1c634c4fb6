import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENT_UPCASTERS, eventSchemaOf } from '@chronicle/domain';
import {
  DataKeyRing,
  EventStore,
  GENESIS_HASH,
  PersonalDataEventStore,
  Position,
  SqliteDataKeyStore,
  SqliteEventStore,
  UpcasterRegistry,
  UpcastingEventStore,
} from '@chronicle/event-store';
import Database from 'better-sqlite3';
import { REDACTED } from '../audit-record';
import { auditWorld } from '../audit-world.spec-helper';
import { AuditFilter, ListAuditEventsQuery } from './list-audit-events.query';
import { ListAuditEventsHandler } from './list-audit-events.handler';

const at = (position: number): Position => ({ commit: BigInt(position), prepare: BigInt(position) });

describe('ListAuditEventsHandler', () => {
  let dir: string;
  let raw: SqliteEventStore;
  let keyStore: SqliteDataKeyStore;
  let store: EventStore;
  let handler: ListAuditEventsHandler;

  const append = (
    stream: string,
    type: string,
    data: Record<string, unknown>,
    actor: string,
    correlationId: string,
  ) =>
    store.append(
      stream,
      [
        {
          id: randomUUID(),
          type,
          data,
          metadata: { actor, correlationId, causationId: null, occurredAt: '2026-11-27T05:00:00.000Z' },
        },
      ],
      'any',
    );

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'audit-list-'));
    raw = SqliteEventStore.open(dir);
    keyStore = new SqliteDataKeyStore(dir, Buffer.alloc(32, 7));
    // As the service composes its store: personal values encrypted at rest, older versions upcast.
    store = new UpcastingEventStore(
      new PersonalDataEventStore(raw, new DataKeyRing(keyStore), (type) => eventSchemaOf(type)?.personal),
      new UpcasterRegistry(EVENT_UPCASTERS),
    );
    handler = new ListAuditEventsHandler(store);
    // 1: an older version; 2: a secret; 3 to 5: neither secret nor personal.
    await append(
      'user-u1',
      'UserRegistered.v1',
      { userId: 'u1', accountId: null, name: 'Ada', age: 36, createdon: '2026-03-01T11:00:00+01:00' },
      'a-1',
      'c-1',
    );
    await append(
      'account-a1',
      'AccountOpened.v1',
      {
        accountId: 'a1',
        email: 'ada@example.com',
        userId: 'u1',
        roles: ['user'],
        passwordHash: 'h',
        openedAt: 'x',
      },
      'a-2',
      'c-2',
    );
    await append('customer-1', 'CustomerNumberAssigned.v1', { customerId: 1 }, 'a-1', 'c-2');
    await append('customer-1', 'CustomerNumberAssigned.v1', { customerId: 2 }, 'a-2', 'c-1');
    await append(
      'account-a1',
      'AccountInvited.v1',
      { accountId: 'a1', invitedAt: 'x', expiresAt: 'y' },
      'a-1',
      'c-1',
    );
  });
  afterEach(async () => {
    await raw.close();
    await keyStore.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const list = (filter: AuditFilter = {}, limit = 100) =>
    handler.execute(new ListAuditEventsQuery(filter, limit));
  const positions = async (filter: AuditFilter = {}, limit = 100) =>
    (await list(filter, limit)).records.map((record) => record.position);

  it.each([0, 1001, 1.5, Number.NaN, -1])('refuses a limit of %p', async (limit) => {
    await expect(list({}, limit)).rejects.toThrow(new RangeError('limit must be from 1 to 1000'));
  });

  it('takes a limit from 1 to 1000', async () => {
    expect(await positions({}, 1)).toEqual(['1']);
    expect(await positions({}, 1000)).toEqual(['1', '2', '3', '4', '5']);
  });

  describe('the whole log', () => {
    it('pages it oldest first, each page telling where the next starts', async () => {
      const first = await list({}, 2);
      expect(first.records.map((record) => record.position)).toEqual(['1', '2']);
      expect(first.next).toEqual(at(2));
      expect(first.broken).toBeNull();
      const rest = await list({ after: first.next! }, 10);
      expect(rest.records.map((record) => record.position)).toEqual(['3', '4', '5']);
      expect(rest.next).toBeNull();
    });

    it('filters by type (upcast), actor, correlation id and recorded time', async () => {
      expect(await positions({ types: ['UserRegistered.v2', 'AccountInvited.v1'] })).toEqual(['1', '5']);
      expect(await positions({ actor: 'a-2' })).toEqual(['2', '4']);
      expect(await positions({ correlationId: 'c-2' })).toEqual(['2', '3']);
      expect(await positions({ since: '2999-01-01T00:00:00.000Z' })).toEqual([]);
      expect(await positions({ until: '2000-01-01T00:00:00.000Z' })).toEqual([]);
      expect(
        await positions({ since: '2000-01-01T00:00:00.000Z', until: '2999-01-01T00:00:00.000Z' }),
      ).toHaveLength(5);
    });
  });

  describe('one stream', () => {
    it('reads only its events, filtered by the same conditions', async () => {
      expect(await positions({ stream: 'customer-1' })).toEqual(['3', '4']);
      expect(await positions({ stream: 'account-a1', types: ['AccountInvited.v1'] })).toEqual(['5']);
      expect(await positions({ stream: 'customer-1', actor: 'a-2' })).toEqual(['4']);
      expect(await positions({ stream: 'customer-1', correlationId: 'c-2' })).toEqual(['3']);
      expect(await positions({ stream: 'customer-1', since: '2999-01-01T00:00:00.000Z' })).toEqual([]);
      expect(await positions({ stream: 'customer-1', until: '2000-01-01T00:00:00.000Z' })).toEqual([]);
      expect(await positions({ stream: 'no-such-stream' })).toEqual([]);
    });

    it('pages it: a next page only when one more event matches, and only events after `after`', async () => {
      const first = await list({ stream: 'customer-1' }, 1);
      expect(first.records.map((record) => record.position)).toEqual(['3']);
      expect(first.next).toEqual(at(3));
      const second = await list({ stream: 'customer-1', after: first.next! }, 1);
      expect(second.records.map((record) => record.position)).toEqual(['4']);
      expect(second.next).toBeNull();
      expect((await list({ stream: 'customer-1' }, 2)).next).toBeNull();
      expect(await positions({ stream: 'customer-1', after: at(4) })).toEqual([]);
    });
  });

  it('shows events upcast, or as stored when asked for raw', async () => {
    const [upcast] = (await list({ stream: 'user-u1' })).records;
    expect(upcast).toMatchObject({
      type: 'UserRegistered.v2',
      data: { createdon: '2026-03-01T10:00:00.000Z' },
    });
    const [stored] = (await list({ stream: 'user-u1', raw: true })).records;
    expect(stored).toMatchObject({
      type: 'UserRegistered.v1',
      data: { createdon: '2026-03-01T11:00:00+01:00' },
    });
    expect(await positions({ raw: true, types: ['UserRegistered.v1'] })).toEqual(['1']);
  });

  it('redacts secrets, and attributes each event to its writer', async () => {
    const [, opened] = (await list()).records;
    expect(opened).toMatchObject({
      type: 'AccountOpened.v1',
      actor: 'a-2',
      correlationId: 'c-2',
      data: { passwordHash: REDACTED, email: 'ada@example.com' },
    });
  });

  it('with the chain, gives the text each hash covers, but none that holds a secret or ciphertext', async () => {
    // A secret that is not personal: stored in plaintext, still never shown.
    const changed = { accountId: 'a1', passwordHash: 'h2', changedAt: 'x', credentialsVersion: 1 };
    await append('account-a1', 'PasswordChanged.v1', changed, 'a-1', 'c-1');
    const records = (await list({ withChain: true })).records;
    expect(records.map((record) => record.chained === null)).toEqual([true, true, false, false, false, true]);
    for (const record of records.slice(2, 5)) {
      expect(createHash('sha256').update(record.chained!).digest('hex')).toBe(record.hash);
    }
    // The first event that is chained follows the hash of the one before it.
    expect(records[2].chained).toContain(records[1].hash);
    expect((await list()).records.every((record) => !('chained' in record))).toBe(true);
  });

  it('chains the first event of the history to the genesis hash', async () => {
    const fresh = auditWorld();
    try {
      await fresh.append('customer-1', 'CustomerNumberAssigned.v1', { customerId: 1 });
      const [record] = (
        await new ListAuditEventsHandler(fresh.store).execute(
          new ListAuditEventsQuery({ withChain: true }, 1),
        )
      ).records;
      expect(JSON.parse(record.chained!).at(-1)).toBe(GENESIS_HASH);
      expect(createHash('sha256').update(record.chained!).digest('hex')).toBe(record.hash);
    } finally {
      await fresh.close();
    }
  });

  it('flags each event whose stored hash no longer follows, and the page by its first', async () => {
    const db = new Database(join(dir, 'events.db'));
    db.exec('DROP TRIGGER IF EXISTS events_no_update');
    db.prepare(
      'UPDATE events SET data = replace(data, \'"customerId":2\', \'"customerId":3\') WHERE position = 4',
    ).run();
    db.prepare(
      'UPDATE events SET data = replace(data, \'"customerId":1\', \'"customerId":9\') WHERE position = 3',
    ).run();
    db.close();
    const page = await list();
    expect(page.records.map((record) => record.chainBroken === undefined)).toEqual([
      true,
      true,
      false,
      false,
      true,
    ]);
    expect(page.records[2].chainBroken).toEqual(expect.any(String));
    expect(page.broken).toMatchObject({ position: '3', reason: page.records[2].chainBroken });
  });
});
