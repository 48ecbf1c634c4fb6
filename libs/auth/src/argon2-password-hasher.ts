import { Injectable, OnModuleInit } from '@nestjs/common';
import * as argon2 from 'argon2';
import { PasswordHasher, PasswordMatch } from '@chronicle/application';
import { preparePassword } from '@chronicle/domain';

/** OWASP's Argon2id baseline: 19 MiB of memory, 2 iterations, 1 lane. */
export const ARGON2_OPTIONS = {
  type: argon2.argon2id,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

@Injectable()
export class Argon2PasswordHasher extends PasswordHasher implements OnModuleInit {
  private dummyHash: Promise<string> | null = null;

  /** Computed up front, so that the first unknown address costs no more than a known one. */
  onModuleInit(): void {
    this.dummyHash ??= this.hash('chronicle-dummy-password');
  }

  hash(password: string): Promise<string> {
    return argon2.hash(preparePassword(password), ARGON2_OPTIONS);
  }

  /**
   * The password as prepared; failing that, for a password that preparing changes, as sent, which
   * is how hashes made before passwords were prepared hold it ('rehash').
   */
  async verify(hash: string, password: string): Promise<PasswordMatch> {
    const prepared = preparePassword(password);
    if (await this.matches(hash, prepared)) return true;
    return prepared !== password && (await this.matches(hash, password)) ? 'rehash' : false;
  }

  private async matches(hash: string, password: string): Promise<boolean> {
    try {
      return await argon2.verify(hash, password);
    } catch {
      return false;
    }
  }

  async verifyDummy(password: string): Promise<void> {
    this.dummyHash ??= this.hash('chronicle-dummy-password');
    await this.verify(await this.dummyHash, password);
  }
}
