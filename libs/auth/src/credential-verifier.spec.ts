import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AccessTokenCodec,
  AccountDirectory,
  AttemptLimits,
  PasswordHasher,
  PasswordMatch,
  RehashPasswordCommand,
  TooManyAttemptsError,
} from '@chronicle/application';
import { CommandBus } from '@nestjs/cqrs';
import { ChronicleConfig } from '@chronicle/config';
import { addressHasher, type Account } from '@chronicle/domain';
import { AccountSessions } from './account-sessions';
import { SqliteAttemptCounters } from './attempt-counters/sqlite-attempt-counters';
import { CredentialVerifier } from './credential-verifier';
import { VerifiedCredentials } from './verified-credentials';

class SlowHasher {
  verifications = 0;
  /** Hashes made before passwords were prepared: they match, but ask to be replaced. */
  legacy = new Set<string>();
  private release: () => void = () => undefined;
  private readonly gate = new Promise<void>((resolve) => (this.release = resolve));

  async verify(hash: string, password: string): Promise<PasswordMatch> {
    this.verifications++;
    await this.gate;
    if (this.legacy.has(hash) && hash === `legacy:${password}`) return 'rehash';
    return hash === `hash:${password}`;
  }

  async verifyDummy(): Promise<void> {
    this.verifications++;
    await this.gate;
  }

  open(): void {
    this.release();
  }
}

const account = {
  exists: true,
  id: 'account-1',
  email: 'ada@example.com',
  userId: 'user-1',
  roles: [],
  passwordHash: 'hash:right password',
} as unknown as Account;

describe('CredentialVerifier.basic', () => {
  let hasher: SlowHasher;
  let verifier: CredentialVerifier;
  let dataDir: string;
  let counters: SqliteAttemptCounters;
  let verified: VerifiedCredentials;
  let executed: unknown[];

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'credential-verifier-'));
    counters = new SqliteAttemptCounters(dataDir);
    hasher = new SlowHasher();
    const directory = {
      findByEmail: (email: string) => Promise.resolve(email === account.email ? account : null),
    } as unknown as AccountDirectory;
    const clock = { now: () => new Date() };
    verified = new VerifiedCredentials({ tokenSecret: Buffer.alloc(32, 7) } as ChronicleConfig, clock);
    executed = [];
    const commands = { execute: (command: unknown) => Promise.resolve(void executed.push(command)) };
    verifier = new CredentialVerifier(
      {} as AccessTokenCodec,
      {} as AccountSessions,
      directory,
      hasher as unknown as PasswordHasher,
      verified,
      new AttemptLimits(counters, clock, {
        loginAttemptsPerAccount: 3,
        loginAttemptsPerClient: 5,
        tokenSecret: Buffer.alloc(32, 7),
      } as ChronicleConfig),
      commands as unknown as CommandBus,
    );
  });
  afterEach(async () => {
    await counters.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('checks the same credentials sent at once with one hash, and remembers the success', async () => {
    const burst = Array.from({ length: 20 }, () =>
      verifier.basic('ada@example.com', 'right password', 'client-1'),
    );
    await new Promise((resolve) => setImmediate(resolve));
    hasher.open();

    const principals = await Promise.all(burst);
    expect(principals.every((principal) => principal?.accountId === 'account-1')).toBe(true);
    expect(hasher.verifications).toBe(1);
    expect(await verifier.basic('ada@example.com', 'right password', 'client-1')).toMatchObject({
      accountId: 'account-1',
    });
    expect(hasher.verifications).toBe(1);
  });

  it('checks every spelling of an address with one hash: its case and the spaces around it', async () => {
    const spellings = ['ada@example.com', 'Ada@Example.COM', ' ada@example.com', 'ADA@EXAMPLE.COM '];
    const burst = spellings.map((email) => verifier.basic(email, 'right password', 'client-1'));
    await new Promise((resolve) => setImmediate(resolve));
    hasher.open();

    expect((await Promise.all(burst)).map((principal) => principal?.accountId)).toEqual(
      spellings.map(() => 'account-1'),
    );
    expect(await verifier.basic('aDa@example.com', 'right password', 'client-2')).not.toBeNull();
    expect(hasher.verifications).toBe(1);
  });

  it('replaces a hash of the password as sent before preparing at a successful login', async () => {
    hasher.open();
    hasher.legacy.add('legacy:old spelling');
    Object.assign(account, { passwordHash: 'legacy:old spelling' });
    try {
      expect(await verifier.basic('ada@example.com', 'old spelling', 'client-1')).toMatchObject({
        accountId: 'account-1',
      });
    } finally {
      Object.assign(account, { passwordHash: 'hash:right password' });
    }
    expect(executed).toEqual([
      expect.objectContaining({
        accountId: 'account-1',
        password: 'old spelling',
        verifiedPasswordHash: 'legacy:old spelling',
      }),
    ]);
    expect(executed[0]).toBeInstanceOf(RehashPasswordCommand);
    // A login that matched the prepared hash replaces nothing.
    expect(await verifier.basic('ada@example.com', 'right password', 'client-1')).not.toBeNull();
    expect(executed).toHaveLength(1);
  });

  it('gives every copy of a wrong guess the same refusal, and other credentials their own hash', async () => {
    const wrong = Array.from({ length: 5 }, () =>
      verifier.basic('ada@example.com', 'wrong password', 'client-1'),
    );
    const unknown = verifier.basic('nobody@example.com', 'wrong password', 'client-1');
    await new Promise((resolve) => setImmediate(resolve));
    hasher.open();

    expect(await Promise.all(wrong)).toEqual([null, null, null, null, null]);
    expect(await unknown).toBeNull();
    expect(hasher.verifications).toBe(2);
    // A failure is not remembered: the next attempt costs a hash again.
    expect(await verifier.basic('ada@example.com', 'wrong password', 'client-1')).toBeNull();
    expect(hasher.verifications).toBe(3);
  });

  describe('under the failed-login limits', () => {
    beforeEach(() => hasher.open());

    it('refuses an address after its failures, known or not, with the same answer, before any hash', async () => {
      for (const email of ['ada@example.com', 'nobody@example.com']) {
        for (let i = 0; i < 3; i++)
          expect(await verifier.basic(email, `guess ${i}`, `client-${email}`)).toBeNull();
        const before = hasher.verifications;
        const refused = verifier.basic(email, 'right password', `client-${email}-2`);
        await expect(refused).rejects.toThrow(TooManyAttemptsError);
        await expect(refused).rejects.toMatchObject({ retryAfterSeconds: expect.any(Number) });
        expect(hasher.verifications).toBe(before);
      }
    });

    it('does not count a success', async () => {
      for (let i = 0; i < 6; i++) {
        expect(await verifier.basic('ada@example.com', 'right password', 'client-1')).not.toBeNull();
        // Forgotten (as a password change does), so that each success runs the check again.
        verified.forgetAccount('account-1');
      }
      for (let i = 0; i < 3; i++) {
        expect(await verifier.basic('ada@example.com', `wrong ${i}`, 'client-1')).toBeNull();
      }
      await expect(verifier.basic('ada@example.com', 'wrong 4', 'client-1')).rejects.toThrow(
        TooManyAttemptsError,
      );
    });

    it("counts a stranger's failures apart from a client the account logged in from", async () => {
      expect(await verifier.basic('ada@example.com', 'right password', 'owner')).not.toBeNull();
      verified.forgetAccount('account-1');
      for (let i = 0; i < 3; i++)
        expect(await verifier.basic('ada@example.com', `guess ${i}`, 'stranger')).toBeNull();
      await expect(verifier.basic('ada@example.com', 'right password', 'newcomer')).rejects.toThrow(
        TooManyAttemptsError,
      );

      expect(await verifier.basic('ada@example.com', 'right password', 'owner')).not.toBeNull();
      verified.forgetAccount('account-1');
      // The known client has its own allowance at the address, and loses it by its own failures.
      for (let i = 0; i < 3; i++)
        expect(await verifier.basic('ada@example.com', `typo ${i}`, 'owner')).toBeNull();
      await expect(verifier.basic('ada@example.com', 'right password', 'owner')).rejects.toThrow(
        TooManyAttemptsError,
      );
    });

    it('takes a refused attempt back: checks refused while others ran are never charged', async () => {
      const limits = new AttemptLimits(counters, { now: () => new Date() }, {
        loginAttemptsPerAccount: 3,
        loginAttemptsPerClient: 5,
        tokenSecret: Buffer.alloc(32, 7),
      } as ChronicleConfig);
      let open: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const burst = Array.from({ length: 6 }, () =>
        limits
          .passwordCheck('client-1', 'ada@example.com', async () => {
            await gate;
            return true;
          })
          .catch((error: unknown) => error),
      );
      await new Promise((resolve) => setImmediate(resolve));
      open();
      const results = await Promise.all(burst);
      expect(results.filter((result) => result === true)).toHaveLength(3);
      expect(results.filter((result) => result instanceof TooManyAttemptsError)).toHaveLength(3);

      // Nothing failed, so the address keeps its whole allowance.
      for (let i = 0; i < 3; i++)
        expect(await limits.passwordCheck('client-2', 'ada@example.com', async () => null)).toBeNull();
      await expect(limits.passwordCheck('client-2', 'ada@example.com', async () => null)).rejects.toThrow(
        TooManyAttemptsError,
      );
    });

    it('keys the counters by a keyed hash of the address, never a plain one', async () => {
      expect(await verifier.basic('Ada@Example.com', 'a wrong guess', 'client-1')).toBeNull();
      const keys = (
        counters as unknown as { db: { prepare(sql: string): { all(): Array<{ key: string }> } } }
      ).db
        .prepare('SELECT key FROM attempts')
        .all()
        .map(({ key }) => key);
      expect(keys).toContain(
        `login-account:${addressHasher(Buffer.alloc(32, 7), 'attempt-limits')('ada@example.com')}`,
      );
      expect(keys.join()).not.toContain(createHash('sha256').update('ada@example.com').digest('hex'));
    });

    it('checks the client first: a limited client adds no counter for another address', async () => {
      for (let i = 0; i < 5; i++)
        expect(await verifier.basic(`user${i}@example.com`, 'guess', 'client-9')).toBeNull();
      const rows = () =>
        (counters as unknown as { db: { prepare(sql: string): { get(): { n: number } } } }).db
          .prepare('SELECT count(*) AS n FROM attempts')
          .get().n;
      const before = rows();

      for (let i = 5; i < 50; i++) {
        await expect(verifier.basic(`user${i}@example.com`, 'guess', 'client-9')).rejects.toThrow(
          TooManyAttemptsError,
        );
      }

      expect(rows()).toBe(before);
    });
  });
});
