import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChronicleConfig } from '@chronicle/config';
import { AccountEvent, accountStreamName } from '@chronicle/domain';
import { SqliteEventStore } from '@chronicle/event-store';
import { CommandContext } from '../shared/command-context';
import { EventSourcedRepository, toNewEvent } from '../shared/event-sourced-repository';
import { Principal } from '../shared/principal';
import { PasswordHasher, PasswordMatch } from '../shared/security.ports';
import { FixedClock } from '../shared/test-doubles.spec-helper';
import { AccountDirectory } from './account-directory';

/** Hashes as `hash:<password>`; a `legacy:<password>` hash matches and asks to be replaced. */
export class PlainHasher extends PasswordHasher {
  readonly verified: Array<[string, string]> = [];

  hash(password: string): Promise<string> {
    return Promise.resolve(`hash:${password}`);
  }

  verify(hash: string, password: string): Promise<PasswordMatch> {
    this.verified.push([hash, password]);
    if (hash === `legacy:${password}`) return Promise.resolve('rehash');
    return Promise.resolve(hash === `hash:${password}`);
  }

  verifyDummy(): Promise<void> {
    return Promise.resolve();
  }
}

export const ACCOUNTS_NOW = Date.parse('2026-11-27T09:00:00.000Z');

export const accountsContext: CommandContext = {
  actor: 'a-1',
  correlationId: 'accounts-spec',
  auth: { method: 'basic', tokenId: null },
};

/** Account a-1's user, signed in with Basic: what openAccount('a-1', …) makes. */
export const basicPrincipal: Principal = {
  accountId: 'a-1',
  userId: 'u-a-1',
  roles: ['user'],
  method: 'basic',
  credentialsVersion: 0,
};

/** The accounts' use cases on a real embedded store in a temporary directory, at a fixed time. */
export interface AccountsWorld {
  store: SqliteEventStore;
  clock: FixedClock;
  repository: EventSourcedRepository;
  directory: AccountDirectory;
  hasher: PlainHasher;
  config: ChronicleConfig;
  /** Appends `events` to the account's stream, as written at the clock's time. */
  write(accountId: string, events: AccountEvent[]): Promise<void>;
  /** An account opened with `password`, its address reserved. */
  openAccount(accountId: string, email: string, password: string): Promise<void>;
  close(): Promise<void>;
}

export function accountsWorld(): AccountsWorld {
  const dir = mkdtempSync(join(tmpdir(), 'accounts-'));
  const store = SqliteEventStore.open(dir);
  const clock = new FixedClock(ACCOUNTS_NOW);
  const repository = new EventSourcedRepository(store, clock);
  const config = {
    tokenSecret: Buffer.alloc(32, 7),
    publicBaseUrl: 'https://accounts.example.test',
    invitationTtlSeconds: 7 * 24 * 3600,
    resetTokenTtlSeconds: 1800,
  } as ChronicleConfig;
  const directory = new AccountDirectory(store, repository, clock, config);
  const write = async (accountId: string, events: AccountEvent[]) => {
    await store.append(
      accountStreamName(accountId),
      events.map((event) => toNewEvent(event, accountsContext, clock.now())),
      'any',
    );
  };
  return {
    store,
    clock,
    repository,
    directory,
    hasher: new PlainHasher(),
    config,
    write,
    openAccount: async (accountId, email, password) => {
      await directory.reserveEmail(email, accountId, accountsContext);
      await write(accountId, [
        {
          type: 'AccountOpened.v1',
          data: {
            accountId,
            email,
            userId: `u-${accountId}`,
            roles: ['user'],
            passwordHash: `hash:${password}`,
            openedAt: clock.now().toISOString(),
          },
        },
      ]);
    },
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
