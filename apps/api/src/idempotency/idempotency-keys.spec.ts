import { createCipheriv, hash, hkdfSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BadRequestException, ConflictException, UnprocessableEntityException } from '@nestjs/common';
import { ChronicleConfig } from '@chronicle/config';
import {
  HeldKey,
  IdempotencyKeys,
  KeyOutcome,
  parseIdempotencyKey,
  requestFingerprint,
  TRIM_EVERY,
  COUNTED_ACCOUNTS,
} from './idempotency-keys';
import { KEYS_PER_ACCOUNT } from './idempotency-store';
import { IDEMPOTENCY_FILE, SqliteEventStore, UnreadableCiphertextError } from '@chronicle/event-store';
import { newEvent } from '../../../../libs/event-store/src/new-event.spec-helper';
import { SqliteIdempotencyStore } from './sqlite-idempotency-store';

const config = { tokenSecret: Buffer.alloc(32, 9), requestTimeoutSeconds: 30 } as ChronicleConfig;
let attempts = 0;
/** A request's id: the correlation id of the events it writes. */
const attempt = () => `request-${++attempts}`;
const held = (outcome: KeyOutcome): HeldKey => {
  expect(outcome).toHaveProperty('held');
  return (outcome as { held: HeldKey }).held;
};

describe('IdempotencyKeys', () => {
  let dir: string;
  let store: SqliteIdempotencyStore;
  let log: SqliteEventStore;
  let now: number;
  let keys: IdempotencyKeys;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'idempotency-keys-'));
    store = new SqliteIdempotencyStore(dir);
    log = SqliteEventStore.open(dir);
    now = 1_800_000_000_000;
    keys = new IdempotencyKeys(store, log, config, () => now);
  });
  afterEach(async () => {
    await keys.onApplicationShutdown();
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('replays a kept answer: status, the headers that matter and the body', async () => {
    const first = held(await keys.begin('a-1', 'k', 'fp', attempt()));
    const body = Buffer.from('{"access_token":"secret-token"}');
    await first.finish(
      201,
      { 'content-type': 'application/json', location: '/x/1', 'x-request-id': 'r' },
      body,
    );
    expect(await keys.begin('a-1', 'k', 'fp', attempt())).toEqual({
      replay: { status: 201, headers: { 'content-type': 'application/json', location: '/x/1' }, body },
    });
  });

  it('keeps answers sealed: no byte of them is readable in the store', async () => {
    const first = held(await keys.begin('a-1', 'k', 'fp', attempt()));
    await first.finish(201, {}, '{"access_token":"secret-token"}');
    const db = (store as unknown as { db: { prepare(sql: string): { all(): { response: string }[] } } }).db;
    const [row] = db.prepare('SELECT response FROM idempotency').all();
    expect(row.response).not.toContain('secret');
    expect(Buffer.from(row.response, 'base64').toString('latin1')).not.toContain('secret');
  });

  describe('kept answers, sealed by the one AES-GCM helper', () => {
    const storedKey = (header: string) => hash('sha256', header, 'base64url');
    const db = () =>
      (store as unknown as { db: { prepare(sql: string): { run(...args: unknown[]): unknown } } }).db;
    const keepAs = (response: string) =>
      db().prepare('UPDATE idempotency SET response = ? WHERE key = ?').run(response, storedKey('k'));
    /** An answer as the code before the helper sealed it: base64 of IV, tag, ciphertext, no associated data. */
    const oldLayout = (plain: object): string => {
      const key = Buffer.from(
        hkdfSync('sha256', config.tokenSecret, '', 'chronicle idempotency answers', 32),
      );
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const sealed = Buffer.concat([cipher.update(JSON.stringify(plain), 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
    };
    const answer = { status: 201, headers: { location: '/customers/7' }, body: Buffer.from('{"id":7}') };
    const asKept = { ...answer, body: answer.body.toString('base64') };

    it('still opens an answer kept in the old layout until it expires', async () => {
      await held(await keys.begin('a-1', 'k', 'fp', attempt())).finish(201, {}, 'replaced below');
      keepAs(oldLayout(asKept));
      expect(await keys.begin('a-1', 'k', 'fp', attempt())).toEqual({ replay: answer });
    });

    it('refuses an altered answer in either layout, and one moved to another key', async () => {
      await held(await keys.begin('a-1', 'k', 'fp', attempt())).finish(201, answer.headers, answer.body);
      const rows = db() as unknown as { prepare(sql: string): { get(key: string): { response: string } } };
      const { response } = rows.prepare('SELECT response FROM idempotency WHERE key = ?').get(storedKey('k'));
      expect(response.startsWith('v2:')).toBe(true);
      expect(await keys.begin('a-1', 'k', 'fp', attempt())).toEqual({ replay: answer });
      const flipped = (text: string, at: number, alphabet: string) =>
        text.slice(0, at) + (text[at] === alphabet[0] ? alphabet[1] : alphabet[0]) + text.slice(at + 1);
      // A byte of the IV, the ciphertext and the tag, each altered in turn.
      for (const at of [4, Math.floor(response.length / 2), response.length - 2]) {
        keepAs(flipped(response, at, 'AB'));
        await expect(keys.begin('a-1', 'k', 'fp', attempt())).rejects.toBeInstanceOf(
          UnreadableCiphertextError,
        );
      }
      const old = oldLayout(asKept);
      for (const at of [2, 20, old.length - 4]) {
        keepAs(flipped(old, at, 'AB'));
        await expect(keys.begin('a-1', 'k', 'fp', attempt())).rejects.toBeInstanceOf(
          UnreadableCiphertextError,
        );
      }
      // Bound to its account and key: the same bytes under another key are not replayed.
      await held(await keys.begin('a-1', 'k2', 'fp', attempt())).finish(201, {}, '{}');
      db().prepare('UPDATE idempotency SET response = ? WHERE key = ?').run(response, storedKey('k2'));
      await expect(keys.begin('a-1', 'k2', 'fp', attempt())).rejects.toBeInstanceOf(
        UnreadableCiphertextError,
      );
    });
  });

  it('refuses another request under the key (422) and a repeat while it runs (409)', async () => {
    held(await keys.begin('a-1', 'k', 'fp', attempt()));
    await expect(keys.begin('a-1', 'k', 'other', attempt())).rejects.toBeInstanceOf(
      UnprocessableEntityException,
    );
    await expect(keys.begin('a-1', 'k', 'fp', attempt())).rejects.toBeInstanceOf(ConflictException);
  });

  it('gives the key up when the request failed, and takes over the key of a request that died', async () => {
    await held(await keys.begin('a-1', 'k', 'fp', attempt())).finish(422, {}, '{}');
    expect(await keys.begin('a-1', 'k', 'fp', attempt())).toHaveProperty('held');
    // Running within its lease (twice REQUEST_TIMEOUT): a repeat is told so.
    now += 59_999;
    await expect(keys.begin('a-1', 'k', 'fp', attempt())).rejects.toBeInstanceOf(ConflictException);
    now += 1;
    expect(await keys.begin('a-1', 'k', 'fp', attempt())).toHaveProperty('held');
  });

  describe('after a request that died between its append and its kept answer', () => {
    const LEASE_MS = 60_000;
    /** An event of the request `request`, as its handler would have appended it. */
    const writtenBy = (request: string, stream = 'customer-1') => {
      const event = newEvent('CustomerRegistered.v1');
      return log.append(
        stream,
        [{ ...event, metadata: { ...event.metadata, correlationId: request } }],
        'any',
      );
    };

    it('answers the retry 409 idempotency-key-answer-lost, for good, and never runs it again', async () => {
      // An event of another request, before the key is taken: not the dead request's.
      await writtenBy('request-before', 'customer-0');
      const dead = attempt();
      held(await keys.begin('a-1', 'k', 'fp', dead));
      await writtenBy(dead);
      now += LEASE_MS;
      const lost = { response: { type: 'idempotency-key-answer-lost' } };
      await expect(keys.begin('a-1', 'k', 'fp', attempt())).rejects.toMatchObject(lost);
      // Kept as the key's answer: no second look at the log.
      const queryLog = jest.spyOn(log, 'queryLog');
      await expect(keys.begin('a-1', 'k', 'fp', attempt())).rejects.toMatchObject(lost);
      await expect(keys.begin('a-1', 'k', 'other', attempt())).rejects.toBeInstanceOf(
        UnprocessableEntityException,
      );
      expect(queryLog).not.toHaveBeenCalled();
    });

    it('refuses another request under the key (422) when the dead one wrote', async () => {
      const dead = attempt();
      held(await keys.begin('a-1', 'k', 'fp', dead));
      await writtenBy(dead);
      now += LEASE_MS;
      await expect(keys.begin('a-1', 'k', 'other', attempt())).rejects.toBeInstanceOf(
        UnprocessableEntityException,
      );
      await expect(keys.begin('a-1', 'k', 'fp', attempt())).rejects.toMatchObject({
        response: { type: 'idempotency-key-answer-lost' },
      });
    });

    it('runs the retry when the dead request wrote nothing, and keeps its answer', async () => {
      // The correlation of a request before the key was taken (the log's end was noted after it).
      await writtenBy('request-before');
      held(await keys.begin('a-1', 'k', 'fp', 'request-before'));
      now += LEASE_MS;
      const retry = held(await keys.begin('a-1', 'k', 'fp', attempt()));
      // The retry holds the key now: a repeat while it runs is told so.
      await expect(keys.begin('a-1', 'k', 'fp', attempt())).rejects.toBeInstanceOf(ConflictException);
      await retry.finish(201, {}, '{"id":1}');
      expect(await keys.begin('a-1', 'k', 'fp', attempt())).toEqual({
        replay: { status: 201, headers: {}, body: Buffer.from('{"id":1}') },
      });
    });

    it('keeps a failure (5xx) that came after its events were written as a lost answer, and frees one that wrote nothing', async () => {
      /** The key's outcome once the failed request's key is settled (in flight until then). */
      const settled = async (key: string): Promise<KeyOutcome> => {
        for (;;) {
          try {
            return await keys.begin('a-1', key, 'fp', attempt());
          } catch (error) {
            const type = (error as { response?: { type?: string } }).response?.type;
            if (type !== 'idempotency-key-in-flight') throw error;
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
        }
      };
      // The store timed out after it had written: the client got a 503.
      const wrote = attempt();
      const first = held(await keys.begin('a-1', 'k', 'fp', wrote));
      await writtenBy(wrote);
      await first.finish(503, {}, '{}');
      await expect(settled('k')).rejects.toMatchObject({ response: { type: 'idempotency-key-answer-lost' } });
      // A failure that wrote nothing keeps nothing: the retry runs.
      await held(await keys.begin('a-1', 'k2', 'fp', attempt())).finish(500, {}, '{}');
      expect(await settled('k2')).toHaveProperty('held');
    });

    it("gives a dead request's key to one of two parallel retries", async () => {
      held(await keys.begin('a-1', 'k', 'fp', attempt()));
      now += LEASE_MS;
      const other = new IdempotencyKeys(new SqliteIdempotencyStore(dir), log, config, () => now);
      try {
        const outcomes = await Promise.allSettled([
          keys.begin('a-1', 'k', 'fp', attempt()),
          other.begin('a-1', 'k', 'fp', attempt()),
        ]);
        expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
        const refused = outcomes.find((outcome) => outcome.status === 'rejected');
        expect(refused?.reason).toMatchObject({ response: { type: 'idempotency-key-in-flight' } });
      } finally {
        await other.onApplicationShutdown();
      }
    });
  });

  it(`keeps at most ${KEYS_PER_ACCOUNT} keys of an account, plus the few since its last trim, whatever the flood`, async () => {
    for (let i = 0; i < 3 * KEYS_PER_ACCOUNT; i++) {
      now++;
      await held(await keys.begin('a-1', `key-${i}`, 'fp', attempt())).finish(200, {}, `{"n":${i}}`);
    }
    const db = (store as unknown as { db: { prepare(sql: string): { get(): { n: number } } } }).db;
    const { n } = db.prepare('SELECT count(*) AS n FROM idempotency').get();
    expect(n).toBeGreaterThanOrEqual(KEYS_PER_ACCOUNT);
    expect(n).toBeLessThanOrEqual(KEYS_PER_ACCOUNT + TRIM_EVERY);
    // The newest are the ones kept.
    expect('replay' in (await keys.begin('a-1', `key-${3 * KEYS_PER_ACCOUNT - 1}`, 'fp', attempt()))).toBe(
      true,
    );
    expect('held' in (await keys.begin('a-1', 'key-0', 'fp', attempt()))).toBe(true);
    expect(statSync(join(dir, IDEMPOTENCY_FILE)).size).toBeLessThan(1024 * 1024);
  });

  it(`keeps that bound for an account whose keys come between another's: every account counts its own new keys`, async () => {
    // The other account's key always comes as the trimming one would: counted together, it
    // would take every trim, and this account's keys would pile up for their 24 hours.
    for (let i = 0; i < 3 * KEYS_PER_ACCOUNT; i++) {
      now++;
      await held(await keys.begin('a-1', `key-${i}`, 'fp', attempt())).finish(200, {}, '{}');
      if (i % (TRIM_EVERY - 1) === TRIM_EVERY - 2) {
        await held(await keys.begin('a-2', `key-${i}`, 'fp', attempt())).finish(200, {}, '{}');
      }
    }
    const db = (store as unknown as { db: { prepare(sql: string): { get(scope: string): { n: number } } } })
      .db;
    const { n } = db.prepare('SELECT count(*) AS n FROM idempotency WHERE scope = ?').get('a-1');
    expect(n).toBeGreaterThanOrEqual(KEYS_PER_ACCOUNT);
    expect(n).toBeLessThanOrEqual(KEYS_PER_ACCOUNT + TRIM_EVERY);
  });

  it(`counts the new keys of ${COUNTED_ACCOUNTS} accounts at most, trimming the one counted longest ago`, async () => {
    const trims: string[] = [];
    const trim = jest.spyOn(store, 'trim').mockImplementation((scope) => {
      trims.push(scope);
      return Promise.resolve();
    });
    for (let i = 0; i <= COUNTED_ACCOUNTS; i++) {
      now++;
      await held(await keys.begin(`a-${i}`, 'key', 'fp', attempt())).finish(200, {}, '{}');
    }
    expect(trims).toEqual(['a-0']);
    expect((keys as unknown as { untrimmed: Map<string, number> }).untrimmed.size).toBe(COUNTED_ACCOUNTS);
    trim.mockRestore();
  });

  it('parses keys of 1 to 255 visible characters, quoted or not', () => {
    expect(parseIdempotencyKey('"abc"')).toBe('abc');
    expect(parseIdempotencyKey('k'.repeat(255))).toHaveLength(255);
    for (const bad of ['', '""', 'k'.repeat(256), 'tab\there', 'é']) {
      expect(() => parseIdempotencyKey(bad)).toThrow(BadRequestException);
    }
  });

  it('fingerprints method, path and body, not the query', () => {
    const base = requestFingerprint('POST', '/customers', { name: 'A' });
    expect(requestFingerprint('POST', '/customers?access_token=t', { name: 'A' })).toBe(base);
    expect(requestFingerprint('PATCH', '/customers', { name: 'A' })).not.toBe(base);
    expect(requestFingerprint('POST', '/customers/1', { name: 'A' })).not.toBe(base);
    expect(requestFingerprint('POST', '/customers', { name: 'B' })).not.toBe(base);
  });
});
