import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { ChronicleConfig } from '@chronicle/config';
import { EventStore, RecordedEvent, SqliteEventStore } from '@chronicle/event-store';
import { FixedClock } from '../shared/test-doubles.spec-helper';
import {
  MAX_RATE_LIMITED_KEYS,
  MAX_SECURITY_KEYS,
  SECURITY_MINUTE_MS,
  SecurityEvents,
  SecurityObservation,
} from './security-events';

const seen = (overrides: Partial<SecurityObservation> = {}): SecurityObservation => ({
  email: 'Ada@Example.com',
  accountId: null,
  client: '192.0.2.7',
  userAgent: 'curl/8.5.0',
  route: 'GET /customers',
  ...overrides,
});

describe('SecurityEvents', () => {
  let dir: string;
  let store: EventStore;
  let clock: FixedClock;
  let events: SecurityEvents;

  const recorded = async (): Promise<RecordedEvent[]> => {
    const all: RecordedEvent[] = [];
    for await (const event of store.readAll()) all.push(event);
    return all;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'security-events-'));
    store = SqliteEventStore.open(dir);
    clock = new FixedClock(Date.parse('2026-11-24T03:00:10.000Z'));
    events = new SecurityEvents(store, clock, { tokenSecret: Buffer.alloc(32, 7) } as ChronicleConfig);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await events.beforeApplicationShutdown();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('coalesces one key within a minute into one event with a count, first and last time', async () => {
    events.observe('LoginFailed.v1', seen());
    clock.time += 5_000;
    events.observe('LoginFailed.v1', seen({ email: ' ada@example.com ', userAgent: 'other' }));
    clock.time += 5_000;
    events.observe('LoginFailed.v1', seen());
    await events.flush();
    const [event, ...more] = await recorded();
    expect(more).toEqual([]);
    expect(event.stream).toBe('security-2026-11-24');
    expect(event.type).toBe('LoginFailed.v1');
    expect(event.data).toEqual({
      emailHash: events.emailHashOf('ada@example.com'),
      accountId: null,
      client: '192.0.2.7',
      userAgent: 'curl/8.5.0',
      route: 'GET /customers',
      count: 3,
      firstAt: '2026-11-24T03:00:10.000Z',
      lastAt: '2026-11-24T03:00:20.000Z',
      overflow: false,
    });
    expect(event.metadata).toMatchObject({
      actor: 'system',
      correlationId: expect.stringMatching(/^security-./),
      auth: { method: 'system', tokenId: null },
    });
  });

  it('keeps kinds, clients, accounts and routes apart, and starts again after a flush', async () => {
    events.observe('LoginFailed.v1', seen());
    events.observe('RateLimited.v1', seen());
    events.observe('LoginFailed.v1', seen({ client: '198.51.100.1' }));
    events.observe('AccessForbidden.v1', seen({ email: null, accountId: 'a-1', route: 'GET /users' }));
    await events.flush();
    events.observe('LoginFailed.v1', seen());
    await events.flush();
    await events.flush();
    const all = await recorded();
    expect(all.map((event) => [event.type, event.data.count])).toEqual([
      ['LoginFailed.v1', 1],
      ['RateLimited.v1', 1],
      ['LoginFailed.v1', 1],
      ['AccessForbidden.v1', 1],
      ['LoginFailed.v1', 1],
    ]);
    expect(all[3].data).toMatchObject({ emailHash: null, accountId: 'a-1', route: 'GET /users' });
    // One correlation id per append: the four of the first minute share theirs.
    const correlations = all.map((event) => event.metadata.correlationId);
    expect(new Set(correlations.slice(0, 4)).size).toBe(1);
    expect(correlations[4]).not.toBe(correlations[0]);
  });

  it('keeps apart two keys whose fields would run into each other', async () => {
    events.observe('AccessForbidden.v1', seen({ accountId: 'a-1', client: '10.0.0.1' }));
    events.observe('AccessForbidden.v1', seen({ accountId: 'a-11', client: '0.0.0.1' }));
    await events.flush();
    expect((await recorded()).map(({ data }) => [data.accountId, data.client, data.count])).toEqual([
      ['a-1', '10.0.0.1', 1],
      ['a-11', '0.0.0.1', 1],
    ]);
  });

  it('cuts a long route to 300 characters and a long user agent to 200', async () => {
    const route = `GET /${'r'.repeat(400)}`;
    events.observe('AccessForbidden.v1', seen({ route, userAgent: 'u'.repeat(500) }));
    events.observe('AccessForbidden.v1', seen({ route: `${route}/other`, userAgent: 'v'.repeat(500) }));
    await events.flush();
    const [event, ...more] = await recorded();
    // Both requests name the same 300 characters of route: one key.
    expect(more).toEqual([]);
    expect(event.data).toMatchObject({ route: route.slice(0, 300), userAgent: 'u'.repeat(200), count: 2 });
  });

  it("keeps a refused token's reasons and token ids apart, and coalesces each", async () => {
    const refused = (reason: 'invalid' | 'expired' | 'revoked', tokenId: string | null) =>
      events.observe('AccessTokenRejected.v1', seen({ email: null, token: { reason, tokenId } }));
    refused('invalid', null);
    refused('invalid', null);
    refused('expired', 't-1');
    refused('revoked', 't-1');
    refused('revoked', 't-2');
    refused('revoked', 't-2');
    await events.flush();
    expect((await recorded()).map(({ data }) => [data.reason, data.tokenId, data.count])).toEqual([
      ['invalid', null, 2],
      ['expired', 't-1', 1],
      ['revoked', 't-1', 1],
      ['revoked', 't-2', 2],
    ]);
  });

  it('never stores the address, only a hash keyed with the server secret', async () => {
    events.observe('ResetTokenRejected.v1', seen({ email: 'secret.person@example.com' }));
    await events.flush();
    const text = JSON.stringify((await recorded()).map(({ data, metadata }) => ({ data, metadata })));
    expect(text).not.toContain('secret.person');
    // Not the plain SHA-256 anyone could compute from a guess...
    const plain = createHash('sha256').update('secret.person@example.com').digest('hex');
    expect(text).not.toContain(plain);
    // ...and another secret gives another hash.
    const other = new SecurityEvents(store, clock, { tokenSecret: Buffer.alloc(32, 8) } as ChronicleConfig);
    expect(other.emailHashOf('secret.person@example.com')).not.toBe(
      events.emailHashOf('secret.person@example.com'),
    );
  });

  it('holds at most MAX_SECURITY_KEYS keys, counting a flood of distinct keys in one overflow per kind', async () => {
    const flood = MAX_SECURITY_KEYS * 3;
    for (let i = 0; i < flood; i++) events.observe('LoginFailed.v1', seen({ email: `user${i}@example.com` }));
    events.observe('AuditRead.v1', seen({ email: null, accountId: 'a-9' }));
    await events.flush();
    const all = await recorded();
    expect(all).toHaveLength(MAX_SECURITY_KEYS + 2);
    const overflows = all.filter((event) => event.data.overflow === true);
    expect(overflows.map((event) => [event.type, event.data.count, event.data.client])).toEqual([
      ['LoginFailed.v1', flood - MAX_SECURITY_KEYS, 'many'],
      ['AuditRead.v1', 1, 'many'],
    ]);
    const counted = all.reduce((sum, event) => sum + (event.data.count as number), 0);
    expect(counted).toBe(flood + 1);
  });

  it('counts 429s per client whatever the address, and a flood of limited clients in few events', async () => {
    for (let i = 0; i < 500; i++) events.observe('RateLimited.v1', seen({ email: `user${i}@example.com` }));
    for (let i = 0; i < 300; i++)
      events.observe('RateLimited.v1', seen({ email: null, client: `198.51.100.${i}` }));
    await events.flush();
    const all = await recorded();
    expect(all).toHaveLength(MAX_RATE_LIMITED_KEYS + 1);
    expect(all[0].data).toMatchObject({ emailHash: null, client: '192.0.2.7', count: 500 });
    expect(all.at(-1)!.data).toMatchObject({ overflow: true, count: 300 - (MAX_RATE_LIMITED_KEYS - 1) });
    // The bound is per minute: the next one holds its own clients.
    events.observe('RateLimited.v1', seen({ client: '203.0.113.1' }));
    await events.flush();
    expect((await recorded()).at(-1)!.data).toMatchObject({ client: '203.0.113.1', overflow: false });
  });

  it('holds MAX_RATE_LIMITED_KEYS limited clients whatever else is pending', async () => {
    for (let i = 0; i < MAX_RATE_LIMITED_KEYS * 2; i++)
      events.observe('LoginFailed.v1', seen({ email: `user${i}@example.com` }));
    events.observe('RateLimited.v1', seen({ client: '203.0.113.9' }));
    await events.flush();
    const limited = (await recorded()).filter((event) => event.type === 'RateLimited.v1');
    expect(limited.map(({ data }) => data)).toEqual([
      expect.objectContaining({ client: '203.0.113.9', overflow: false, count: 1 }),
    ]);
  });

  it('says loudly when it cannot record the events, drops their counts and records the next ones', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation();
    const full = new Error('disk full');
    const append = jest.spyOn(store, 'append').mockRejectedValueOnce(full);
    events.observe('LoginFailed.v1', seen());
    events.observe('AuditRead.v1', seen());
    await expect(events.flush()).resolves.toBeUndefined();
    expect(errors.mock.calls).toEqual([[{ err: full, events: 2 }, 'Could not record 2 security events']]);
    expect(errors.mock.contexts[0]).toMatchObject({ context: 'SecurityEvents' });

    events.observe('AuditRead.v1', seen({ accountId: 'a-2' }));
    await events.flush();
    expect((await recorded()).map(({ type, data }) => [type, data.accountId, data.count])).toEqual([
      ['AuditRead.v1', 'a-2', 1],
    ]);
    expect(append).toHaveBeenCalledTimes(2);
  });

  describe('on a timer', () => {
    // Real setImmediate: the embedded store's appends use it.
    beforeEach(() =>
      jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask', 'Date'] }),
    );
    afterEach(async () => {
      await events.beforeApplicationShutdown();
      jest.useRealTimers();
    });

    it('flushes at the end of the minute in which the first pending request came', async () => {
      const append = jest.spyOn(store, 'append');
      events.observe('LoginFailed.v1', seen());
      clock.time += 20_000;
      events.observe('LoginFailed.v1', seen({ client: '198.51.100.1' }));
      // 03:00:10 + 49.999 s: still the first minute.
      await jest.advanceTimersByTimeAsync(SECURITY_MINUTE_MS - 10_000 - 1);
      expect(append).not.toHaveBeenCalled();
      await jest.advanceTimersByTimeAsync(1);
      clock.time = Date.parse('2026-11-24T03:01:05.000Z');
      events.observe('LoginFailed.v1', seen());
      await events.flush();
      // The end of the minute appended its two; the explicit flush, the next minute's one.
      expect(append.mock.calls.map(([, appended]) => appended.length)).toEqual([2, 1]);
      expect((await recorded()).map(({ data }) => [data.client, data.firstAt])).toEqual([
        ['192.0.2.7', '2026-11-24T03:00:10.000Z'],
        ['198.51.100.1', '2026-11-24T03:00:30.000Z'],
        ['192.0.2.7', '2026-11-24T03:01:05.000Z'],
      ]);
    });

    it('keeps one timer for the minute however many keys come, and none after shutdown', async () => {
      for (let i = 0; i < 5; i++) events.observe('LoginFailed.v1', seen({ client: `198.51.100.${i}` }));
      expect(jest.getTimerCount()).toBe(1);
      await events.beforeApplicationShutdown();
      expect(jest.getTimerCount()).toBe(0);
      expect(await recorded()).toHaveLength(5);
    });
  });

  it('flushes what is pending on shutdown', async () => {
    events.observe('AuditRead.v1', seen({ accountId: 'a-1' }));
    await events.beforeApplicationShutdown();
    expect((await recorded()).map((event) => event.type)).toEqual(['AuditRead.v1']);
  });
});
