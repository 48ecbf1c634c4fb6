import { Injectable } from '@nestjs/common';
import { AccessTokenClaims, AccountDirectory, Clock, Principal } from '@chronicle/application';
import {
  Account,
  AccountClosed,
  AccountOpened,
  ChronicleEventType,
  credentialsVersionAfter,
  PasswordChanged,
  PasswordReset,
  Role,
  SessionEnded,
  sessionStreamName,
} from '@chronicle/domain';
import {
  CheckpointStore,
  EventProcessor,
  EventStore,
  HostedProcessor,
  Position,
  ProcessorHandler,
  RecordedEvent,
} from '@chronicle/event-store';
import { VerifiedCredentials } from './verified-credentials';
import { TokenRejection } from './token-rejection';

/** What an account's tokens are checked against. */
interface AccountAccess {
  userId: string;
  roles: readonly Role[];
  /** Tokens carrying an older credentials version were revoked by a reset or change. */
  credentialsVersion: number;
  /** Ended sessions, with their expiry (ms): kept only until their tokens would expire anyway. */
  endedSessions: Map<string, number>;
  /**
   * Read whole from the account's stream: its credentials version is complete from the start.
   * One the replay opened is complete only once the replay has caught up (a change may come further on).
   */
  loaded: boolean;
}

/** An account's entry as stored beside the checkpoint. */
interface StoredAccess {
  userId: string;
  roles: readonly Role[];
  credentialsVersion: number;
  endedSessions: Array<[string, number]>;
}

const PROCESSOR = 'account-sessions';

/** Events without an effect on sessions move the stored checkpoint at most this often. */
const IDLE_COMMIT_MS = 1_000;

/** The events apply() reads: the subscription skips every other. */
const SESSION_EVENT_TYPES = [
  'AccountOpened.v1',
  'AccountClosed.v1',
  'PasswordReset.v1',
  'PasswordChanged.v1',
  'SessionEnded.v1',
] as const satisfies readonly ChronicleEventType[];

/**
 * What a signed access token needs checked on every request (roles, credentials version, ended
 * sessions), kept in memory and fed by an event processor, so a request costs no I/O once the
 * history is applied. Revocation compares credentials versions, never instants from different
 * hosts' clocks. Holds no secrets.
 */
@Injectable()
export class AccountSessions implements HostedProcessor {
  private readonly accounts = new Map<string, AccountAccess>();
  /** Accounts the processor changed since its last commit: stored with the next checkpoint. */
  private readonly changed = new Set<string>();
  private readonly processor: EventProcessor;

  constructor(
    private readonly store: EventStore,
    private readonly checkpoints: CheckpointStore,
    private readonly directory: AccountDirectory,
    private readonly clock: Clock,
    private readonly verifiedCredentials: VerifiedCredentials,
  ) {
    this.processor = new EventProcessor(store, this.handler(), { parking: checkpoints, retryDelayMs: 500 });
  }

  /**
   * Replays the history in the background, then follows live events until stopped (the processor
   * host starts it); resolves once caught up.
   */
  start(): Promise<void> {
    return this.processor.start();
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
  stop(): Promise<void> {
    return this.processor.stop();
  }

  /** A well-signed token's principal, or why it is refused (expired, revoked). */
  async principalFor(claims: AccessTokenClaims): Promise<Principal | TokenRejection> {
    if (claims.expiresAt <= this.clock.now().getTime()) return new TokenRejection('expired', claims.tokenId);
    const revoked = new TokenRejection('revoked', claims.tokenId);
    const caughtUp = this.processor.isCaughtUp;
    const kept = this.accounts.get(claims.accountId);
    const access = kept && (kept.loaded || caughtUp) ? kept : await this.loadAccount(claims.accountId);
    if (!access || claims.credentialsVersion < access.credentialsVersion) return revoked;
    if (access.endedSessions.has(claims.sessionId)) return revoked;
    // Until the replay has caught up, a session's end may lie further on: its stream says.
    if (!caughtUp && (await this.sessionEndedInStore(claims.accountId, claims.sessionId))) return revoked;
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

  /**
   * The sessions live in this process's memory and are stored, account by account, with their
   * checkpoint: a start reads them back and replays only the events after it, so its cost does
   * not grow with the history. After that, the checkpoint in memory is the one to resume from:
   * the one stored may lag behind what memory holds, and a change without its version (written
   * before changes carried one) counts one up each time it is applied.
   */
  private handler(): ProcessorHandler {
    let applied: Position | null | undefined;
    return {
      name: PROCESSOR,
      eventTypes: SESSION_EVENT_TYPES,
      idleCommitMs: IDLE_COMMIT_MS,
      loadCheckpoint: async () => {
        if (applied === undefined) {
          const [position, stored] = await Promise.all([
            this.checkpoints.load(PROCESSOR),
            this.checkpoints.loadState(PROCESSOR),
          ]);
          for (const [accountId, access] of stored) this.restore(accountId, access as StoredAccess);
          applied = position;
        }
        return applied;
      },
      handle: (event) => this.apply(event),
      commit: async (upTo) => {
        const changes = new Map<string, StoredAccess | null>();
        for (const accountId of this.changed) changes.set(accountId, this.stored(accountId));
        this.changed.clear();
        await this.checkpoints.storeState(PROCESSOR, upTo, changes);
        applied = upTo;
      },
    };
  }

  private stored(accountId: string): StoredAccess | null {
    const access = this.accounts.get(accountId);
    if (!access) return null;
    return {
      userId: access.userId,
      roles: access.roles,
      credentialsVersion: access.credentialsVersion,
      endedSessions: [...access.endedSessions],
    };
  }

  /** An entry read back from the store: like one the replay opened, complete once caught up. */
  private restore(accountId: string, stored: StoredAccess): void {
    const now = this.clock.now().getTime();
    const kept = this.accounts.get(accountId);
    if (kept) {
      // Read from its stream by a request meanwhile: the stored entry can only add ended sessions.
      kept.credentialsVersion = Math.max(kept.credentialsVersion, stored.credentialsVersion);
      for (const [sessionId, until] of stored.endedSessions) {
        if (until > now) kept.endedSessions.set(sessionId, until);
      }
      return;
    }
    this.accounts.set(accountId, {
      userId: stored.userId,
      roles: stored.roles,
      credentialsVersion: stored.credentialsVersion,
      endedSessions: new Map(stored.endedSessions.filter(([, until]) => until > now)),
      loaded: false,
    });
  }

  private apply(event: RecordedEvent): void {
    this.changed.add((event.data as { accountId: string }).accountId);
    switch (event.type) {
      case 'AccountOpened.v1': {
        const data = event.data as AccountOpened['data'];
        // An account already read from its stream holds more than the opening does.
        if (this.accounts.has(data.accountId)) break;
        this.accounts.set(data.accountId, {
          userId: data.userId,
          roles: data.roles,
          credentialsVersion: 0,
          endedSessions: new Map(),
          loaded: false,
        });
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
      case 'AccountClosed.v1': {
        // Its person was erased: no token of it works, no cached password either. The next
        // request finds no account (loadAccount), and the entry stored is dropped at the commit.
        const { accountId } = event.data as AccountClosed['data'];
        this.verifiedCredentials.forgetAccount(accountId);
        this.accounts.delete(accountId);
        break;
      }
    }
  }

  /** An account opened by another process moments ago may not have reached the processor yet. */
  private async loadAccount(accountId: string): Promise<AccountAccess | null> {
    const account: Account | null = await this.directory.findById(accountId);
    if (!account) return null;
    const access: AccountAccess = {
      userId: account.userId,
      roles: account.roles,
      credentialsVersion: account.credentialsVersion,
      endedSessions: this.accounts.get(accountId)?.endedSessions ?? new Map<string, number>(),
      loaded: true,
    };
    this.accounts.set(accountId, access);
    return access;
  }

  /** Whether the session's own stream records its end (remembered like one applied live). */
  private async sessionEndedInStore(accountId: string, sessionId: string): Promise<boolean> {
    const ended = (await this.store.readStream(sessionStreamName(sessionId))).find(
      (event) => event.type === 'SessionEnded.v1',
    );
    if (!ended) return false;
    this.sessionEnded(accountId, sessionId, Date.parse((ended.data as SessionEnded['data']).expiresAt));
    return true;
  }
}
