import { AccessTokenCodec, AccountDirectory, PasswordHasher } from '@chronicle/application';
import { ChronicleConfig } from '@chronicle/config';
import type { Account } from '@chronicle/domain';
import { AccountSessions } from './account-sessions';
import { CredentialVerifier } from './credential-verifier';
import { VerifiedCredentials } from './verified-credentials';

class SlowHasher {
  verifications = 0;
  private release: () => void = () => undefined;
  private readonly gate = new Promise<void>((resolve) => (this.release = resolve));

  async verify(hash: string, password: string): Promise<boolean> {
    this.verifications++;
    await this.gate;
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

  beforeEach(() => {
    hasher = new SlowHasher();
    const directory = {
      findByEmail: (email: string) => Promise.resolve(email === account.email ? account : null),
    } as unknown as AccountDirectory;
    const clock = { now: () => new Date() };
    const verified = new VerifiedCredentials({ tokenSecret: Buffer.alloc(32, 7) } as ChronicleConfig, clock);
    verifier = new CredentialVerifier(
      {} as AccessTokenCodec,
      {} as AccountSessions,
      directory,
      hasher as unknown as PasswordHasher,
      verified,
    );
  });

  it('checks the same credentials sent at once with one hash, and remembers the success', async () => {
    const burst = Array.from({ length: 20 }, () => verifier.basic('ada@example.com', 'right password'));
    await new Promise((resolve) => setImmediate(resolve));
    hasher.open();

    const principals = await Promise.all(burst);
    expect(principals.every((principal) => principal?.accountId === 'account-1')).toBe(true);
    expect(hasher.verifications).toBe(1);
    expect(await verifier.basic('ada@example.com', 'right password')).toMatchObject({
      accountId: 'account-1',
    });
    expect(hasher.verifications).toBe(1);
  });

  it('gives every copy of a wrong guess the same refusal, and other credentials their own hash', async () => {
    const wrong = Array.from({ length: 5 }, () => verifier.basic('ada@example.com', 'wrong password'));
    const unknown = verifier.basic('nobody@example.com', 'wrong password');
    await new Promise((resolve) => setImmediate(resolve));
    hasher.open();

    expect(await Promise.all(wrong)).toEqual([null, null, null, null, null]);
    expect(await unknown).toBeNull();
    expect(hasher.verifications).toBe(2);
    // A failure is not remembered: the next attempt costs a hash again.
    expect(await verifier.basic('ada@example.com', 'wrong password')).toBeNull();
    expect(hasher.verifications).toBe(3);
  });
});
