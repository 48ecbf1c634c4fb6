import { ChronicleConfig } from '@chronicle/config';
import { addressHasher } from '@chronicle/domain';
import { ChronicleMetrics } from '@chronicle/metrics';
import {
  AttemptCounters,
  AttemptLimits,
  KNOWN_CLIENT_MS,
  LIMIT_WINDOW_MS,
  TooManyAttemptsError,
} from './attempt-limits';
import { FixedClock } from './test-doubles.spec-helper';

/** Counters in memory, as the adapters keep them (test/contract/attempt-counters.spec.ts). */
class MemoryCounters extends AttemptCounters {
  readonly counts = new Map<string, number>();
  readonly marks = new Map<string, number>();
  /** Every add, with the window and expiry it was given. */
  readonly added: Array<{ key: string; window: number; expiresAt: number }> = [];
  closed = 0;

  add(key: string, window: number, expiresAt: number): Promise<number> {
    this.added.push({ key, window, expiresAt });
    const count = (this.counts.get(`${key}@${window}`) ?? 0) + 1;
    this.counts.set(`${key}@${window}`, count);
    return Promise.resolve(count);
  }

  remove(key: string, window: number): Promise<void> {
    const count = this.counts.get(`${key}@${window}`) ?? 0;
    this.counts.set(`${key}@${window}`, Math.max(0, count - 1));
    return Promise.resolve();
  }

  mark(key: string, expiresAt: number): Promise<void> {
    this.marks.set(key, expiresAt);
    return Promise.resolve();
  }

  marked(key: string, now: number): Promise<boolean> {
    return Promise.resolve((this.marks.get(key) ?? -Infinity) > now);
  }

  close(): Promise<void> {
    this.closed += 1;
    return Promise.resolve();
  }

  /** The count of `key` in the window of `at` (ms). */
  countAt(key: string, at: number): number {
    return this.counts.get(`${key}@${Math.floor(at / LIMIT_WINDOW_MS)}`) ?? 0;
  }
}

const SECRET = Buffer.alloc(32, 7);
const address = addressHasher(SECRET, 'attempt-limits');
const EMAIL = 'ada@example.com';
const CLIENT = '203.0.113.9';
/** 10 s into a window. */
const START = 2_000_000 * LIMIT_WINDOW_MS + 10_000;

describe('AttemptLimits', () => {
  let counters: MemoryCounters;
  let clock: FixedClock;
  let metrics: ChronicleMetrics;
  let limits: AttemptLimits;
  const settings = {
    tokenSecret: SECRET,
    loginAttemptsPerClient: 3,
    loginAttemptsPerAccount: 2,
    resetRequestsPerClient: 2,
    resetRequestsPerEmail: 1,
  } as ChronicleConfig;

  beforeEach(() => {
    counters = new MemoryCounters();
    clock = new FixedClock(START);
    metrics = new ChronicleMetrics();
    limits = new AttemptLimits(counters, clock, settings, metrics);
  });

  const rejections = async (limit: string) =>
    (await metrics.rateLimitRejections.get()).values.find((value) => value.labels.limit === limit)?.value ??
    0;
  const fails = () => Promise.resolve(null);
  const succeeds = () => Promise.resolve('account-1');

  describe('count', () => {
    const limit = { name: 'spec', max: 2, detail: 'Slow down.' };

    it('given a fresh window, when counted up to the limit, then lets each attempt through under <name>:<subject>', async () => {
      await limits.count(limit, 'x');
      await limits.count(limit, 'x');
      expect(counters.added).toEqual([
        { key: 'spec:x', window: 2_000_000, expiresAt: 2_000_001 * LIMIT_WINDOW_MS },
        { key: 'spec:x', window: 2_000_000, expiresAt: 2_000_001 * LIMIT_WINDOW_MS },
      ]);
      expect(counters.countAt('spec:x', START)).toBe(2);
    });

    it('when past the limit, then refuses with the seconds left in the window, takes the attempt back and counts the rejection', async () => {
      await limits.count(limit, 'x');
      await limits.count(limit, 'x');
      clock.time = START + 1_500;
      const refused = limits.count(limit, 'x');
      await expect(refused).rejects.toBeInstanceOf(TooManyAttemptsError);
      await expect(refused).rejects.toMatchObject({
        code: 'too-many-requests',
        name: 'TooManyAttemptsError',
        message: 'Slow down.',
        // 15 min less 11.5 s, rounded up.
        retryAfterSeconds: 889,
      });
      expect(counters.countAt('spec:x', START)).toBe(2);
      expect(await rejections('spec')).toBe(1);
    });

    it('tells a client refused in the last instant of a window to wait one second, never zero', async () => {
      clock.time = 2_000_001 * LIMIT_WINDOW_MS - 1;
      await limits.count(limit, 'x');
      await limits.count(limit, 'x');
      await expect(limits.count(limit, 'x')).rejects.toMatchObject({ retryAfterSeconds: 1 });
    });

    it('counts each subject, and each window, apart', async () => {
      await limits.count(limit, 'x');
      await limits.count(limit, 'x');
      await expect(limits.count(limit, 'y')).resolves.toBeDefined();
      clock.time = START + LIMIT_WINDOW_MS;
      await expect(limits.count(limit, 'x')).resolves.toBeDefined();
      expect(counters.added.at(-1)).toEqual({
        key: 'spec:x',
        window: 2_000_001,
        expiresAt: 2_000_002 * LIMIT_WINDOW_MS,
      });
    });

    it('takes an attempt back when refunded', async () => {
      const attempt = await limits.count(limit, 'x');
      await attempt.refund();
      expect(counters.countAt('spec:x', START)).toBe(0);
    });

    it('refuses without metrics when the host has none', async () => {
      const bare = new AttemptLimits(counters, clock, settings);
      await bare.count(limit, 'x');
      await bare.count(limit, 'x');
      await expect(bare.count(limit, 'x')).rejects.toBeInstanceOf(TooManyAttemptsError);
    });
  });

  describe('passwordCheck', () => {
    const knownKey = `login-known:${address(EMAIL)}:${CLIENT}`;

    it('given a stranger, when the check fails, then counts it against the client and the address', async () => {
      expect(await limits.passwordCheck(CLIENT, EMAIL, fails)).toBeNull();
      expect(counters.countAt(`login-client:${CLIENT}`, START)).toBe(1);
      expect(counters.countAt(`login-account:${address(EMAIL)}`, START)).toBe(1);
      expect(counters.marks.size).toBe(0);
    });

    it('names the address by its keyed hash, the same for any spelling of it', async () => {
      await limits.passwordCheck(CLIENT, ' ADA@example.com ', fails);
      expect(counters.added.map((added) => added.key)).toEqual([
        `login-client:${CLIENT}`,
        `login-account:${address(EMAIL)}`,
      ]);
      expect(JSON.stringify(counters.added)).not.toContain('example.com');
    });

    it('when the check succeeds, then takes both attempts back and knows the client for 30 days', async () => {
      expect(await limits.passwordCheck(CLIENT, EMAIL, succeeds)).toBe('account-1');
      expect(counters.countAt(`login-client:${CLIENT}`, START)).toBe(0);
      expect(counters.countAt(`login-account:${address(EMAIL)}`, START)).toBe(0);
      expect(counters.marks.get(knownKey)).toBe(START + KNOWN_CLIENT_MS);
    });

    it('given a known client, counts its failures at the address apart, and not against it as a client', async () => {
      await limits.passwordCheck(CLIENT, EMAIL, succeeds);
      counters.added.length = 0;
      // Strangers fill the address's count.
      await limits.passwordCheck('198.51.100.1', EMAIL, fails);
      await limits.passwordCheck('198.51.100.2', EMAIL, fails);
      await expect(limits.passwordCheck('198.51.100.3', EMAIL, fails)).rejects.toBeInstanceOf(
        TooManyAttemptsError,
      );

      expect(await limits.passwordCheck(CLIENT, EMAIL, fails)).toBeNull();
      expect(counters.added.at(-1)?.key).toBe(`login-account:${address(EMAIL)}:${CLIENT}`);
      expect(counters.countAt(`login-client:${CLIENT}`, START)).toBe(0);
      expect(await limits.passwordCheck(CLIENT, EMAIL, succeeds)).toBe('account-1');
      // Its own failures, and only those, limit it there.
      await limits.passwordCheck(CLIENT, EMAIL, fails);
      await expect(limits.passwordCheck(CLIENT, EMAIL, succeeds)).rejects.toBeInstanceOf(
        TooManyAttemptsError,
      );
      expect(counters.countAt(`login-client:${CLIENT}`, START)).toBe(0);
    });

    it('given a client known once, treats it as a stranger when its 30 days are over', async () => {
      await limits.passwordCheck(CLIENT, EMAIL, succeeds);
      clock.time = START + KNOWN_CLIENT_MS;
      await limits.passwordCheck(CLIENT, EMAIL, fails);
      expect(counters.added.at(-1)?.key).toBe(`login-account:${address(EMAIL)}`);
      expect(counters.countAt(`login-client:${CLIENT}`, clock.time)).toBe(1);
    });

    it("when the address's limit refuses, then takes the client's attempt back and runs no check", async () => {
      await limits.passwordCheck('198.51.100.1', EMAIL, fails);
      await limits.passwordCheck('198.51.100.2', EMAIL, fails);
      const check = jest.fn(succeeds);
      await expect(limits.passwordCheck(CLIENT, EMAIL, check)).rejects.toMatchObject({
        message: 'Too many failed password checks; try again later.',
      });
      expect(check).not.toHaveBeenCalled();
      expect(counters.countAt(`login-client:${CLIENT}`, START)).toBe(0);
      expect(await rejections('login-account')).toBe(1);
    });

    it("when the client's limit refuses, then adds no count at the address", async () => {
      for (const email of ['a@example.com', 'b@example.com', 'c@example.com'])
        await limits.passwordCheck(CLIENT, email, fails);
      await expect(limits.passwordCheck(CLIENT, EMAIL, fails)).rejects.toBeInstanceOf(TooManyAttemptsError);
      expect(counters.countAt(`login-account:${address(EMAIL)}`, START)).toBe(0);
      expect(await rejections('login-client')).toBe(1);
    });
  });

  describe('oldPasswordCheck', () => {
    it("counts a wrong old password against the account's own limit, and takes a right one back", async () => {
      expect(await limits.oldPasswordCheck('account-1', fails)).toBeNull();
      expect(counters.countAt('password-change:account-1', START)).toBe(1);
      expect(await limits.oldPasswordCheck('account-1', succeeds)).toBe('account-1');
      expect(counters.countAt('password-change:account-1', START)).toBe(1);
      await limits.oldPasswordCheck('account-1', fails);
      await expect(limits.oldPasswordCheck('account-1', succeeds)).rejects.toMatchObject({
        message: 'Too many failed password checks; try again later.',
      });
      expect(await limits.oldPasswordCheck('account-2', fails)).toBeNull();
    });
  });

  describe('resetRequest', () => {
    it("counts a request against its client's limit, then its address's keyed hash", async () => {
      await limits.resetRequest(CLIENT, EMAIL);
      expect(counters.added.map((added) => added.key)).toEqual([
        `reset-client:${CLIENT}`,
        `reset-email:${address(EMAIL)}`,
      ]);
      await expect(limits.resetRequest('198.51.100.1', EMAIL)).rejects.toMatchObject({
        message: 'Too many password reset requests; try again later.',
      });
      expect(await rejections('reset-email')).toBe(1);
      await limits.resetRequest(CLIENT, 'bob@example.com');
      await expect(limits.resetRequest(CLIENT, 'carol@example.com')).rejects.toBeInstanceOf(
        TooManyAttemptsError,
      );
      expect(await rejections('reset-client')).toBe(1);
      expect(counters.countAt(`reset-email:${address('carol@example.com')}`, START)).toBe(0);
    });
  });

  it('closes its counters when the application shuts down', async () => {
    await counters.onApplicationShutdown();
    expect(counters.closed).toBe(1);
  });
});
