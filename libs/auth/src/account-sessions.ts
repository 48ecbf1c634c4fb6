import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AccessTokenClaims, AccountDirectory, Clock, Principal } from '@chronicle/application';
import {
  Account,
  AccountOpened,
  ChronicleEventType,
  credentialsVersionAfter,
  PasswordChanged,
  PasswordReset,
  Role,
  SessionEnded,
} from '@chronicle/domain';
import { EventStore, EventSubscription, Position, RecordedEvent } from '@chronicle/event-store';
import { VerifiedCredentials } from './verified-credentials';

/** What an account's tokens are checked against. */
interface AccountAccess {
  userId: string;
  roles: readonly Role[];
  /** Tokens carrying an older credentials version were revoked by a reset or change. */
  credentialsVersion: number;
  /** Ended sessions, with their expiry (ms): kept only until their tokens would expire anyway. */
  endedSessions: Map<string, number>;
}

const RETRY_DELAY_MS = 500;

/** The events apply() reads: the subscription skips every other. */
const SESSION_EVENT_TYPES = [
  'AccountOpened.v1',
  'PasswordReset.v1',
  'PasswordChanged.v1',
  'SessionEnded.v1',
] as const satisfies readonly ChronicleEventType[];

/**
 * What a signed access token needs checked on every request (roles, credentials version, ended
 * sessions), kept in memory and fed by a subscription to the event store, so a request costs no
 * I/O. Revocation compares credentials versions, never instants from different hosts' clocks.
 * Holds no secrets.
 */
@Injectable()
export class AccountSessions implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AccountSessions.name);
  private readonly accounts = new Map<string, AccountAccess>();
  private subscription: EventSubscription | null = null;
  private following: Promise<void> | null = null;
  private lastPosition: Position | undefined;
  private stopped = false;

  constructor(
    private readonly store: EventStore,
    private readonly directory: AccountDirectory,
    private readonly clock: Clock,
    private readonly verifiedCredentials: VerifiedCredentials,
  ) {}

  /** Resolves once the history is applied; then follows live events until shutdown. */
  onApplicationBootstrap(): Promise<void> {
    return new Promise((caughtUp) => {
      this.following = this.follow(caughtUp);
    });
  }

  /** Returns once the loop has ended: no subscription is reopened on a store about to close. */
  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    await this.subscription?.close();
    await this.following;
  }

  async principalFor(claims: AccessTokenClaims): Promise<Principal | null> {
    const now = this.clock.now().getTime();
    if (claims.expiresAt <= now) return null;
    const access = this.accounts.get(claims.accountId) ?? (await this.loadAccount(claims.accountId));
    if (!access || claims.credentialsVersion < access.credentialsVersion) return null;
    if (access.endedSessions.has(claims.sessionId)) return null;
    return {
      accountId: claims.accountId,
      userId: access.userId,
      roles: access.roles,
      method: 'bearer',
      tokenId: claims.tokenId,
      sessionId: claims.sessionId,
      credentialsVersion: claims.credentialsVersion,
    };
  }

  /** Applies a session end this process has just written, before its event comes round. */
  sessionEnded(accountId: string, sessionId: string, expiresAt: number): void {
    const access = this.accounts.get(accountId);
    if (!access) return;
    const now = this.clock.now().getTime();
    // Ended sessions past their expiry need no record: their tokens have expired.
    for (const [id, until] of access.endedSessions) if (until <= now) access.endedSessions.delete(id);
    if (expiresAt > now) access.endedSessions.set(sessionId, expiresAt);
  }

  /** Applies a reset or change this process has just written: older tokens stop working at once. */
  credentialsChanged(accountId: string, credentialsVersion: number): void {
    // Cached Basic credentials may hold the old password: the next request checks it again.
    this.verifiedCredentials.forgetAccount(accountId);
    const access = this.accounts.get(accountId);
    if (access) access.credentialsVersion = Math.max(access.credentialsVersion, credentialsVersion);
  }

  private async follow(caughtUp: () => void): Promise<void> {
    while (!this.stopped) {
      try {
        this.subscription = this.store.subscribeToAll({
          after: this.lastPosition,
          eventTypes: SESSION_EVENT_TYPES,
        });
        for await (const message of this.subscription) {
          if (message.kind === 'caught-up') caughtUp();
          else if (message.kind === 'checkpoint') this.lastPosition = message.position;
          else this.apply(message.event);
        }
      } catch (error) {
        this.logger.error({ err: error }, 'Account sessions subscription failed; resubscribing');
        await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS));
      }
    }
    caughtUp();
  }

  private apply(event: RecordedEvent): void {
    this.lastPosition = event.position;
    switch (event.type) {
      case 'AccountOpened.v1': {
        const data = event.data as AccountOpened['data'];
        // An account loaded on demand (below) is already at least this far.
        if (!this.accounts.has(data.accountId)) {
          this.accounts.set(data.accountId, {
            userId: data.userId,
            roles: data.roles,
            credentialsVersion: 0,
            endedSessions: new Map(),
          });
        }
        break;
      }
      case 'PasswordReset.v1':
      case 'PasswordChanged.v1': {
        const change = event as unknown as PasswordReset | PasswordChanged;
        const previous = this.accounts.get(change.data.accountId)?.credentialsVersion ?? 0;
        this.credentialsChanged(change.data.accountId, credentialsVersionAfter(previous, change));
        break;
      }
      case 'SessionEnded.v1': {
        const data = event.data as SessionEnded['data'];
        this.sessionEnded(data.accountId, data.sessionId, Date.parse(data.expiresAt));
        break;
      }
    }
  }

  /** An account opened by another process moments ago may not have reached the subscription yet. */
  private async loadAccount(accountId: string): Promise<AccountAccess | null> {
    const account: Account | null = await this.directory.findById(accountId);
    if (!account) return null;
    const access: AccountAccess = {
      userId: account.userId,
      roles: account.roles,
      credentialsVersion: account.credentialsVersion,
      endedSessions: new Map(),
    };
    this.accounts.set(accountId, access);
    return access;
  }
}
