import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { ChronicleConfig } from '@chronicle/config';
import {
  AccessTokenRejectedData,
  addressHasher,
  SecurityEventData,
  SecurityEventType,
  securityStreamName,
} from '@chronicle/domain';
import { EventStore } from '@chronicle/event-store';
import { Clock } from '../shared/clock';
import { CommandContext, SYSTEM_ACTOR, SYSTEM_AUTH } from '../shared/command-context';
import { toNewEvent } from '../shared/event-sourced-repository';
import { timeOrderedId } from '../shared/time-ordered-id';

/** What the edge saw of one request that a security event counts. */
export interface SecurityObservation {
  /** The address the request named or authenticated with, as sent; hashed here, never kept. */
  email: string | null;
  accountId: string | null;
  client: string;
  userAgent: string | null;
  /** Method and route template, e.g. `GET /api/v1/audit/events`. */
  route: string;
  /** A refused Bearer token (AccessTokenRejected.v1): why, and its id only if its signature verified. */
  token?: Pick<AccessTokenRejectedData, 'reason' | 'tokenId'>;
}

/** Distinct keys held for the current minute; past it, requests are counted in one overflow per kind. */
export const MAX_SECURITY_KEYS = 1000;
/**
 * Distinct 429 keys (limited clients) held for the current minute, whatever the addresses: a
 * limited client stores nothing more than its one event of the minute, and a flood of limited
 * clients at most this many events a minute and process.
 */
export const MAX_RATE_LIMITED_KEYS = 20;
export const SECURITY_MINUTE_MS = 60_000;
const MAX_USER_AGENT_CHARS = 200;
const MAX_ROUTE_CHARS = 300;

interface Pending {
  type: SecurityEventType;
  data: SecurityEventData | AccessTokenRejectedData;
  /** Who records it: the service for what the API sees, `cli:<OS user>` for the CLI's own reads. */
  writer: CommandContext | null;
}

/**
 * Security events (failed logins, refused Bearer tokens, wrong old passwords, 403s, 429s, rejected
 * reset tokens, audit reads), coalesced: one event per kind, e-mail hash, account, client, route
 * (and a refused token's reason and id) and minute, with a count. The state is bounded (MAX_SECURITY_KEYS keys, then one overflow entry per kind), so a
 * flood costs O(1) memory per request and at most MAX_SECURITY_KEYS + 6 events per minute and
 * process. Flushed as one append to the day's `security-<date>` stream at the end of each minute
 * and on shutdown; a crash loses the counts of the minute under way (never a client's write).
 */
@Injectable()
export class SecurityEvents implements BeforeApplicationShutdown {
  private readonly logger = new Logger('SecurityEvents');
  /** Keyed hash of a normalised address: the same for the same address, and only the server can compute it. */
  readonly emailHashOf: (email: string) => string;
  private pending = new Map<string, Pending>();
  /** Keys of pending 429 events (one per limited client and route). */
  private rateLimitedKeys = 0;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    config: ChronicleConfig,
  ) {
    this.emailHashOf = addressHasher(config.tokenSecret, 'security-email-hash');
  }

  /**
   * Counts one request (or CLI run); O(1), never waits, never throws. `writer`: the CLI's own
   * context, so that its reads are recorded as its own (`cli:<OS user>`); else the service records.
   */
  observe(
    type: SecurityEventType,
    observation: SecurityObservation,
    writer: CommandContext | null = null,
  ): void {
    const now = this.clock.now().toISOString();
    // A 429 counts per client, never per address: a limited client naming new addresses adds nothing.
    const limited = type === 'RateLimited.v1';
    const emailHash = observation.email === null || limited ? null : this.emailHashOf(observation.email);
    const route = observation.route.slice(0, MAX_ROUTE_CHARS);
    const { token } = observation;
    const key = [
      type,
      emailHash,
      observation.accountId,
      observation.client,
      route,
      token?.reason,
      token?.tokenId,
      writer?.actor,
    ].join('\0');
    const known = this.pending.get(key);
    if (known) {
      known.data.count++;
      known.data.lastAt = now;
      return;
    }
    if (
      this.pending.size >= MAX_SECURITY_KEYS ||
      (limited && this.rateLimitedKeys >= MAX_RATE_LIMITED_KEYS)
    ) {
      this.overflow(type, route, now);
      return;
    }
    if (limited) this.rateLimitedKeys++;
    this.pending.set(key, {
      type,
      writer,
      data: {
        emailHash,
        accountId: observation.accountId,
        client: observation.client,
        userAgent: observation.userAgent?.slice(0, MAX_USER_AGENT_CHARS) ?? null,
        route,
        count: 1,
        firstAt: now,
        lastAt: now,
        overflow: false,
        ...(token === undefined ? {} : { reason: token.reason, tokenId: token.tokenId }),
      },
    });
    this.schedule();
  }

  /** Past the bound: one entry per kind counts every request whose key did not fit. */
  private overflow(type: SecurityEventType, route: string, now: string): void {
    const key = `${type}\0overflow`;
    const entry = this.pending.get(key);
    if (entry) {
      entry.data.count++;
      entry.data.lastAt = now;
      return;
    }
    this.pending.set(key, {
      type,
      writer: null,
      data: {
        emailHash: null,
        accountId: null,
        client: 'many',
        userAgent: null,
        route,
        count: 1,
        firstAt: now,
        lastAt: now,
        overflow: true,
      },
    });
  }

  /** Flushes at the end of the minute in which the first of the pending requests came. */
  private schedule(): void {
    if (this.timer !== null) return;
    const now = this.clock.now().getTime();
    const wait = SECURITY_MINUTE_MS - (now % SECURITY_MINUTE_MS);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, wait);
    this.timer.unref();
  }

  /** Appends what is pending, one event per key, in one append; flushes run one at a time. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.append());
    return this.flushing;
  }

  private async append(): Promise<void> {
    if (this.pending.size === 0) return;
    const entries = [...this.pending.values()];
    this.pending = new Map();
    this.rateLimitedKeys = 0;
    const now = this.clock.now();
    // One append per writer: the service's own, and each CLI run's under its own actor.
    const byWriter = new Map<string, { context: CommandContext; entries: Pending[] }>();
    for (const entry of entries) {
      const context = entry.writer ?? {
        actor: SYSTEM_ACTOR,
        correlationId: `security-${timeOrderedId()}`,
        auth: SYSTEM_AUTH,
      };
      const group = byWriter.get(context.actor) ?? { context, entries: [] };
      group.entries.push(entry);
      byWriter.set(context.actor, group);
    }
    for (const { context, entries: group } of byWriter.values()) {
      try {
        await this.store.append(
          securityStreamName(now),
          group.map((entry) => toNewEvent({ type: entry.type, data: entry.data }, context, now)),
          'any',
        );
      } catch (error) {
        // Not a client's write: said loudly, and the counts are dropped rather than grown without bound.
        this.logger.error(
          { err: error, events: group.length },
          `Could not record ${group.length} security events`,
        );
      }
    }
  }

  /** Before the stores close (their modules close on onApplicationShutdown). */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
  }
}
