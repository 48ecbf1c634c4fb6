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
} from './idempotency-keys';
import { KEYS_PER_ACCOUNT } from './idempotency-store';
import { IDEMPOTENCY_FILE } from '@chronicle/event-store';
import { SqliteIdempotencyStore } from './sqlite-idempotency-store';

const config = { tokenSecret: Buffer.alloc(32, 9), requestTimeoutSeconds: 30 } as ChronicleConfig;
const held = (outcome: KeyOutcome): HeldKey => {
  expect(outcome).toHaveProperty('held');
  return (outcome as { held: HeldKey }).held;
};

describe('IdempotencyKeys', () => {
  let dir: string;
  let store: SqliteIdempotencyStore;
  let now: number;
  let keys: IdempotencyKeys;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'idempotency-keys-'));
    store = new SqliteIdempotencyStore(dir);
    now = 1_800_000_000_000;
    keys = new IdempotencyKeys(store, config, () => now);
  });
  afterEach(async () => {
    await keys.onApplicationShutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  it('replays a kept answer: status, the headers that matter and the body', async () => {
    const first = held(await keys.begin('a-1', 'k', 'fp'));
    const body = Buffer.from('{"access_token":"secret-token"}');
    await first.finish(
      201,
      { 'content-type': 'application/json', location: '/x/1', 'x-request-id': 'r' },
      body,
    );
    expect(await keys.begin('a-1', 'k', 'fp')).toEqual({
      replay: { status: 201, headers: { 'content-type': 'application/json', location: '/x/1' }, body },
    });
  });

  it('keeps answers sealed: no byte of them is readable in the store', async () => {
    const first = held(await keys.begin('a-1', 'k', 'fp'));
    await first.finish(201, {}, '{"access_token":"secret-token"}');
    const db = (store as unknown as { db: { prepare(sql: string): { all(): { response: string }[] } } }).db;
    const [row] = db.prepare('SELECT response FROM idempotency').all();
    expect(row.response).not.toContain('secret');
    expect(Buffer.from(row.response, 'base64').toString('latin1')).not.toContain('secret');
  });

  it('refuses another request under the key (422) and a repeat while it runs (409)', async () => {
    held(await keys.begin('a-1', 'k', 'fp'));
    await expect(keys.begin('a-1', 'k', 'other')).rejects.toBeInstanceOf(UnprocessableEntityException);
    await expect(keys.begin('a-1', 'k', 'fp')).rejects.toBeInstanceOf(ConflictException);
  });

  it('gives the key up when the request failed, and takes over the key of a request that died', async () => {
    await held(await keys.begin('a-1', 'k', 'fp')).finish(422, {}, '{}');
    expect(await keys.begin('a-1', 'k', 'fp')).toHaveProperty('held');
    // Running within its lease (twice REQUEST_TIMEOUT): a repeat is told so.
    now += 59_999;
    await expect(keys.begin('a-1', 'k', 'fp')).rejects.toBeInstanceOf(ConflictException);
    now += 1;
    expect(await keys.begin('a-1', 'k', 'fp')).toHaveProperty('held');
  });

  it(`keeps at most ${KEYS_PER_ACCOUNT} keys of an account, plus the few since its last trim, whatever the flood`, async () => {
    for (let i = 0; i < 3 * KEYS_PER_ACCOUNT; i++) {
      now++;
      await held(await keys.begin('a-1', `key-${i}`, 'fp')).finish(200, {}, `{"n":${i}}`);
    }
    const db = (store as unknown as { db: { prepare(sql: string): { get(): { n: number } } } }).db;
    const { n } = db.prepare('SELECT count(*) AS n FROM idempotency').get();
    expect(n).toBeGreaterThanOrEqual(KEYS_PER_ACCOUNT);
    expect(n).toBeLessThanOrEqual(KEYS_PER_ACCOUNT + 16);
    // The newest are the ones kept.
    expect('replay' in (await keys.begin('a-1', `key-${3 * KEYS_PER_ACCOUNT - 1}`, 'fp'))).toBe(true);
    expect('held' in (await keys.begin('a-1', 'key-0', 'fp'))).toBe(true);
    expect(statSync(join(dir, IDEMPOTENCY_FILE)).size).toBeLessThan(1024 * 1024);
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
