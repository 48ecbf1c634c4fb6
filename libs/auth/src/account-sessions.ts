import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AccessTokenClaims, AccountDirectory, Clock, Principal } from '@chronicle/application';
import {
  AccessTokenRevoked,
  AccessTokensRevoked,
  Account,
  AccountEvent,
  AccountOpened,
  PasswordChanged,
  PasswordReset,
  Role,
} from '@chronicle/domain';
import {
  CheckpointStore,
  EventProcessor,
  EventStore,
  Position,
  ProcessorHandler,
  RecordedEvent,
} from '@chronicle/event-store';
import { VerifiedCredentials } from './verified-credentials';

interface Session {
  userId: string;
  roles: readonly Role[];
  revokedTokenIds: Set<string>;
  /** Milliseconds: tokens issued at or before this were revoked by a password change. */
  revokedBefore: number;
  /**
   * Read whole from the account's stream: complete from the start. One the replay opened is
   * complete only once the replay has caught up (a revocation may come further on).
   */
  loaded: boolean;
}

/** The events apply() reads: the subscription skips every other. */
const SESSION_EVENT_TYPES = [
  'AccountOpened.v1',
  'AccessTokenRevoked.v1',
  'PasswordReset.v1',
  'PasswordChanged.v1',
  'AccessTokensRevoked.v1',
] as const satisfies readonly AccountEvent['type'][];

/**
 * What a signed access token needs checked on every request (roles, revocations), kept in memory
 * and fed by a subscription to the event store, so a request costs no I/O. Holds no secrets.
 */
@Injectable()
export class AccountSessions implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly sessions = new Map<string, Session>();
  private readonly processor: EventProcessor;

  constructor(
    store: EventStore,
    parking: CheckpointStore,
    private readonly directory: AccountDirectory,
    private readonly clock: Clock,
    private readonly verifiedCredentials: VerifiedCredentials,
  ) {
    this.processor = new EventProcessor(store, this.handler(), { parking, retryDelayMs: 500 });
  }

  /** Replays the history in the background, then follows live events until shutdown. */
  onApplicationBootstrap(): void {
    void this.processor.start();
  }

  /** Whether the history has been applied: until then each account is read from its stream. */
  get isCaughtUp(): boolean {
    return this.processor.isCaughtUp;
  }

  /** Resolves with the error that stopped the session tracking for good (a damaged store). */
  get failed(): Promise<Error> {
    return this.processor.failed;
  }

  /** The last position applied, null before the first. */
  get position(): Position | null {
    return this.processor.position;
  }

  /** Returns once the processor has stopped: no subscription is reopened on a store about to close. */
  onApplicationShutdown(): Promise<void> {
    return this.processor.stop();
  }

  async principalFor(claims: AccessTokenClaims): Promise<Principal | null> {
    if (claims.expiresAt <= this.clock.now().getTime()) return null;
    const kept = this.sessions.get(claims.accountId);
    const session =
      kept && (kept.loaded || this.processor.isCaughtUp) ? kept : await this.loadSession(claims.accountId);
    if (!session || session.revokedTokenIds.has(claims.tokenId)) return null;
    if (claims.issuedAt <= session.revokedBefore) return null;
    return {
      accountId: claims.accountId,
      userId: session.userId,
      roles: session.roles,
      method: 'bearer',
      tokenId: claims.tokenId,
    };
  }

  /** Applies a revocation this process has just written, before its event comes round. */
  tokenRevoked(accountId: string, tokenId: string): void {
    this.verifiedCredentials.forgetAccount(accountId);
    this.sessions.get(accountId)?.revokedTokenIds.add(tokenId);
  }

  /** Applies a password change this process has just written: older tokens stop working at once. */
  tokensRevokedBefore(accountId: string, instant: string): void {
    // Cached Basic credentials may hold the old password: the next request checks it again.
    this.verifiedCredentials.forgetAccount(accountId);
    const session = this.sessions.get(accountId);
    if (session) session.revokedBefore = Math.max(session.revokedBefore, Date.parse(instant));
  }

  /** The sessions live in this process's memory, and so does their checkpoint. */
  private handler(): ProcessorHandler {
    let applied: Position | null = null;
    return {
      name: 'account-sessions',
      eventTypes: SESSION_EVENT_TYPES,
      loadCheckpoint: () => Promise.resolve(applied),
      handle: (event) => this.apply(event),
      commit: (upTo) => {
        applied = upTo;
        return Promise.resolve();
      },
    };
  }

  private apply(event: RecordedEvent): void {
    switch (event.type) {
      case 'AccountOpened.v1': {
        const data = event.data as AccountOpened['data'];
        // A session already read from the stream holds more than the opening does.
        if (this.sessions.has(data.accountId)) break;
        this.sessions.set(data.accountId, {
          userId: data.userId,
          roles: data.roles,
          revokedTokenIds: new Set(),
          revokedBefore: Number.NEGATIVE_INFINITY,
          loaded: false,
        });
        break;
      }
      case 'AccessTokenRevoked.v1': {
        const data = event.data as AccessTokenRevoked['data'];
        this.tokenRevoked(data.accountId, data.tokenId);
        break;
      }
      case 'PasswordReset.v1': {
        const data = event.data as PasswordReset['data'];
        this.tokensRevokedBefore(data.accountId, data.resetAt);
        break;
      }
      case 'PasswordChanged.v1': {
        const data = event.data as PasswordChanged['data'];
        this.tokensRevokedBefore(data.accountId, data.changedAt);
        break;
      }
      case 'AccessTokensRevoked.v1': {
        const data = event.data as AccessTokensRevoked['data'];
        this.tokensRevokedBefore(data.accountId, data.revokedBefore);
        break;
      }
    }
  }

  /** An account opened by another process moments ago may not have reached the subscription yet. */
  private async loadSession(accountId: string): Promise<Session | null> {
    const account: Account | null = await this.directory.findById(accountId);
    if (!account) return null;
    const session = {
      userId: account.userId,
      roles: account.roles,
      revokedTokenIds: new Set(account.revokedTokenIds),
      revokedBefore:
        account.accessTokensRevokedBefore === null
          ? Number.NEGATIVE_INFINITY
          : Date.parse(account.accessTokensRevokedBefore),
      loaded: true,
    };
    this.sessions.set(accountId, session);
    return session;
  }
}
