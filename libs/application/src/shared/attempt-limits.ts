import { Inject, Injectable, Optional } from '@nestjs/common';
import { ChronicleConfig } from '@chronicle/config';
import { addressHasher } from '@chronicle/domain';
import { ChronicleMetrics } from '@chronicle/metrics';
import { Clock } from './clock';

/** Every limit counts within fixed windows of 15 minutes (API.md). */
export const LIMIT_WINDOW_MS = 15 * 60 * 1000;
/** How long a client an account logged in from stays known to that account. */
export const KNOWN_CLIENT_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Attempts counted per key and window, shared by every API instance (adapters: a SQLite file on
 * the embedded default, a MongoDB collection on the production shape). One counter per key and
 * window, dropped once its window is over: O(1) per attempt, and bounded state.
 */
export abstract class AttemptCounters {
  /** Adds one attempt to `key` in `window` and answers the window's count, this one included. */
  abstract add(key: string, window: number, expiresAt: number): Promise<number>;
  /** Takes one attempt back (a password check that succeeded). */
  abstract remove(key: string, window: number): Promise<void>;
  /** Remembers `key` until `expiresAt` (ms); marking it again moves the expiry. */
  abstract mark(key: string, expiresAt: number): Promise<void>;
  /** Whether `key` was marked and has not expired at `now` (ms). */
  abstract marked(key: string, now: number): Promise<boolean>;
  abstract close(): Promise<void>;

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }
}

/** A limit was reached: 429 with Retry-After, the same answer whatever the subject. */
export class TooManyAttemptsError extends Error {
  readonly code = 'too-many-requests';
  constructor(
    readonly retryAfterSeconds: number,
    detail: string,
  ) {
    super(detail);
    this.name = 'TooManyAttemptsError';
  }
}

export interface Limit {
  /** Names the counter: `<name>:<subject>` is its key. */
  name: string;
  max: number;
  /** What the client is told when it is reached. */
  detail: string;
}

export interface CountedAttempt {
  /** Takes the attempt back. */
  refund(): Promise<void>;
}

const LOGIN_DETAIL = 'Too many failed password checks; try again later.';
const RESET_DETAIL = 'Too many password reset requests; try again later.';

/**
 * Failed-login and reset-request limits. The per-client limit is counted first, so that a client
 * already limited adds no counter for another address. `count` is the one place a limit rejects.
 *
 * Only a stranger's own attempts slow the stranger (OWASP's lockout advice, with the client's
 * address standing in for a device cookie): a client the account logged in from in the last 30
 * days counts its failures at that address apart from everyone else's, and a change's `old` is
 * counted per account, where only requests authenticated as that account can add.
 */
@Injectable()
export class AttemptLimits {
  /** Addresses name counters by their keyed hash: the counters' store never holds a testable one. */
  private readonly addressKey: (email: string) => string;

  constructor(
    private readonly counters: AttemptCounters,
    private readonly clock: Clock,
    private readonly settings: ChronicleConfig,
    @Optional() @Inject(ChronicleMetrics) private readonly metrics?: ChronicleMetrics,
  ) {
    this.addressKey = addressHasher(settings.tokenSecret, 'attempt-limits');
  }

  /**
   * Runs a Basic password check under the login limits: each check counts before it runs (so
   * parallel guesses cannot all slip in), and a check that succeeds is taken back: only failures
   * remain. A success makes the client known to the address.
   */
  async passwordCheck<T>(client: string, email: string, check: () => Promise<T | null>): Promise<T | null> {
    const address = this.addressKey(email);
    const knownKey = `login-known:${address}:${client}`;
    const known = await this.counters.marked(knownKey, this.clock.now().getTime());
    // A known client is limited at this address on its own: strangers' guesses, from anywhere,
    // neither count there nor against it as a client.
    const byClient = known
      ? null
      : await this.count(
          { name: 'login-client', max: this.settings.loginAttemptsPerClient, detail: LOGIN_DETAIL },
          client,
        );
    let byAccount: CountedAttempt;
    try {
      byAccount = await this.count(
        { name: 'login-account', max: this.settings.loginAttemptsPerAccount, detail: LOGIN_DETAIL },
        known ? `${address}:${client}` : address,
      );
    } catch (error) {
      // Refused for the address, not for a wrong password: the client's count is not its fault.
      await byClient?.refund();
      throw error;
    }
    const result = await check();
    if (result !== null) {
      await Promise.all([
        byClient?.refund(),
        byAccount.refund(),
        this.counters.mark(knownKey, this.clock.now().getTime() + KNOWN_CLIENT_MS),
      ]);
    }
    return result;
  }

  /**
   * Runs the check of a change's `old` password under the account's own limit: the request is
   * authenticated as the account, so nobody without its credentials can add to this count.
   */
  async oldPasswordCheck<T>(accountId: string, check: () => Promise<T | null>): Promise<T | null> {
    const attempt = await this.count(
      { name: 'password-change', max: this.settings.loginAttemptsPerAccount, detail: LOGIN_DETAIL },
      accountId,
    );
    const result = await check();
    if (result !== null) await attempt.refund();
    return result;
  }

  /** Counts a reset request against its client's and its address's limits. */
  async resetRequest(client: string, email: string): Promise<void> {
    await this.count(
      { name: 'reset-client', max: this.settings.resetRequestsPerClient, detail: RESET_DETAIL },
      client,
    );
    await this.count(
      { name: 'reset-email', max: this.settings.resetRequestsPerEmail, detail: RESET_DETAIL },
      this.addressKey(email),
    );
  }

  /** Counts one attempt on `subject`; past the limit, TooManyAttemptsError. */
  async count(limit: Limit, subject: string): Promise<CountedAttempt> {
    const now = this.clock.now().getTime();
    const window = Math.floor(now / LIMIT_WINDOW_MS);
    const expiresAt = (window + 1) * LIMIT_WINDOW_MS;
    const key = `${limit.name}:${subject}`;
    const count = await this.counters.add(key, window, expiresAt);
    if (count > limit.max) {
      // A refused attempt ran no check: taken back, so that only checks that failed remain (the
      // owner's own attempts, refused while others filled the count, are never charged to it).
      await this.counters.remove(key, window);
      this.metrics?.rateLimitRejections.inc({ limit: limit.name });
      throw new TooManyAttemptsError(Math.max(1, Math.ceil((expiresAt - now) / 1000)), limit.detail);
    }
    return { refund: () => this.counters.remove(key, window) };
  }
}
