import { createSecretKey, hash, hkdfSync, KeyObject } from 'node:crypto';
import {
  BadRequestException,
  ConflictException,
  Injectable,
  OnApplicationShutdown,
  UnprocessableEntityException,
} from '@nestjs/common';
import { ChronicleConfig } from '@chronicle/config';
import {
  AES_GCM_IV_BYTES,
  AES_GCM_TAG_BYTES,
  aesGcmOpen,
  aesGcmSeal,
  EventStore,
  formatPosition,
  parsePosition,
  type Position,
} from '@chronicle/event-store';
import { Claim, IdempotencyStore, KEYS_PER_ACCOUNT, KeyRecord } from './idempotency-store';

/** The longest key taken (the IETF httpapi draft leaves it to the server). */
export const MAX_KEY_LENGTH = 255;
/** A key: visible ASCII and spaces, optionally sent as a structured-field string ("..."). */
const KEY_SHAPE = /^[\x20-\x7e]{1,255}$/;
/**
 * The keys the document states, all of them taken: HTTP drops the spaces at a field value's ends,
 * so a key starts and ends with a visible character.
 */
export const IDEMPOTENCY_KEY_SCHEMA = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_KEY_LENGTH,
  pattern: '^[\\x21-\\x7e](?:[\\x20-\\x7e]*[\\x21-\\x7e])?$',
} as const;
/** Headers of a first answer that are replayed with its status and body. */
const REPLAYED_HEADERS = ['content-type', 'location', 'etag', 'vary'] as const;
/** New keys between two trims of an account's records: the bound is KEYS_PER_ACCOUNT plus this. */
export const TRIM_EVERY = 64;
/** Accounts whose new keys are counted at once (the map of counts grows no further). */
export const COUNTED_ACCOUNTS = 10_000;
const PRUNE_INTERVAL_MS = 60_000;
/**
 * Kept for a key whose first request wrote its events and died before its answer was kept: the
 * answer cannot be rebuilt (it may have held a token), and running the request again would write
 * twice. Not sealed: it holds nothing.
 */
const ANSWER_LOST = 'lost';
/**
 * Marks an answer sealed by aesGcmSeal (IV, ciphertext, tag; base64url after it), bound to its
 * account and key. ':' is not in base64's alphabet: an answer kept before it (base64 of IV, tag,
 * ciphertext, bound to nothing) never starts so, and is still opened until it expires.
 */
const SEALED = 'v2:';
/** Kept answers from before SEALED were bound to no associated data: GCM's empty AAD. */
const UNBOUND = Buffer.alloc(0);

/** The first answer to a key, as kept (sealed) and replayed. */
export interface KeptAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** A request that holds its key: finish() keeps its answer, or gives the key up when it failed. */
export interface HeldKey {
  finish(status: number, headers: Record<string, unknown>, payload: unknown): Promise<void>;
}

export type KeyOutcome = { held: HeldKey } | { replay: KeptAnswer };

/** A request that held a key: its id (its events' correlation id) and the log's end before it wrote. */
type Attempt = Pick<KeyRecord, 'owner' | 'after'>;

/** What identifies a request under its key: method, path (no query: credentials travel there) and body. */
export function requestFingerprint(method: string, url: string, body: unknown): string {
  const path = url.split('?')[0];
  return hash('sha256', `${method} ${path}\n${JSON.stringify(body ?? null)}`, 'base64url');
}

/** The key a header names, or a 400 for one that is empty, too long or not visible ASCII. */
export function parseIdempotencyKey(header: string): string {
  const key =
    header.length >= 2 && header.startsWith('"') && header.endsWith('"') ? header.slice(1, -1) : header;
  if (!KEY_SHAPE.test(key)) {
    throw new BadRequestException({
      type: 'invalid-idempotency-key',
      title: 'Invalid Idempotency-Key',
      detail: `An Idempotency-Key is 1 to ${MAX_KEY_LENGTH} visible ASCII characters.`,
    });
  }
  return key;
}

/** Another request (method, path or body) under a key already used: 422. */
export const keyReused = () =>
  new UnprocessableEntityException({
    type: 'idempotency-key-reused',
    title: 'Idempotency-Key reused',
    detail: 'This Idempotency-Key was used for another request (method, path or body).',
  });

/** The same request again after the first under its key wrote its events and died unanswered: 409. */
export const answerLost = () =>
  new ConflictException({
    type: 'idempotency-key-answer-lost',
    title: 'Idempotency-Key answer lost',
    detail:
      'The first request with this Idempotency-Key was carried out, but the server failed before its ' +
      'answer was kept; it is not run again. Read the resource to see its effect.',
  });

/** The same request again while the first under its key still runs: 409. */
export const keyInFlight = () =>
  new ConflictException({
    type: 'idempotency-key-in-flight',
    title: 'Idempotency-Key in flight',
    detail: 'The first request with this Idempotency-Key is still running; retry when it has been answered.',
  });

/**
 * Idempotency-Key on POST and PATCH (IETF httpapi draft), per account: the first request under a
 * key runs and its answer is kept (sealed: it may hold an access token) for 24 hours; the same
 * request again gets that answer and writes nothing; another request under the key is refused
 * (422), and so is a repeat while the first still runs (409). Per request with a key: a read of
 * the event log's end and one claim (one keyed write) before, one keyed update after.
 *
 * A request that dies between its append and its kept answer (a crash) leaves its key unanswered.
 * Once its lease is over, a retry looks for the dead request's events in the log, by their
 * correlation id (the request's id, kept as the key's owner) after the log's end it noted: found,
 * the key is answered 409 idempotency-key-answer-lost for good; none, the retry runs. The same
 * path on both shapes: the embedded store answers from its correlation index, EventStoreDB scans
 * its log from the noted end.
 */
@Injectable()
export class IdempotencyKeys implements OnApplicationShutdown {
  /** A KeyObject: a raw key would be checked and imported again by every cipher. */
  private readonly sealingKey: KeyObject;
  private readonly leaseMs: number;
  /**
   * New keys of each account since its last trim, counted by account: counted together, another
   * account's key could take every trim, and one account's keys would pile up for their window.
   */
  private readonly untrimmed = new Map<string, number>();
  private pruning: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: IdempotencyStore,
    private readonly log: EventStore,
    config: ChronicleConfig,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.sealingKey = createSecretKey(
      Buffer.from(hkdfSync('sha256', config.tokenSecret, '', 'chronicle idempotency answers', 32)),
    );
    // A request is cut off after REQUEST_TIMEOUT: one still unanswered after twice that has died.
    this.leaseMs = 2 * config.requestTimeoutSeconds * 1000;
  }

  /** `request` is the request's id: the correlation id of every event it writes. */
  async begin(account: string, header: string, fingerprint: string, request: string): Promise<KeyOutcome> {
    const key = hash('sha256', parseIdempotencyKey(header), 'base64url');
    this.startPruning();
    // Before the claim, so before anything the request writes: its events lie after this end.
    const end = await this.log.endPosition();
    const attempt: Attempt = { owner: request, after: end === null ? null : formatPosition(end) };
    const claim = (): Claim => ({ scope: account, key, fingerprint, ...attempt, now: this.now() });
    for (;;) {
      const held = await this.store.claim(claim());
      if (held === null) {
        await this.countNewKey(account);
        return this.holding(account, key, attempt);
      }
      if (held.response !== null || held.started > this.now() - this.leaseMs) {
        if (held.fingerprint !== fingerprint) throw keyReused();
        if (held.response === null) throw keyInFlight();
        if (held.response === ANSWER_LOST) throw answerLost();
        return { replay: this.unseal(held.response, account, key) };
      }
      // Its request died unanswered (its lease is over): did it write before it died?
      if (await this.wroteEvents(held)) {
        await this.store.complete(account, key, held.owner, ANSWER_LOST);
        throw held.fingerprint === fingerprint ? answerLost() : keyReused();
      }
      if (await this.store.takeOver(claim(), held.owner)) return this.holding(account, key, attempt);
      // Another retry took it first: look again.
    }
  }

  /** Trims the account's records once it has TRIM_EVERY new keys since its last trim. */
  private async countNewKey(account: string): Promise<void> {
    if (!this.untrimmed.has(account) && this.untrimmed.size >= COUNTED_ACCOUNTS) {
      // The counts are bounded too: the account counted longest ago is trimmed early, harmlessly.
      const [oldest] = this.untrimmed.keys();
      this.untrimmed.delete(oldest);
      await this.store.trim(oldest, KEYS_PER_ACCOUNT);
    }
    const untrimmed = (this.untrimmed.get(account) ?? 0) + 1;
    if (untrimmed < TRIM_EVERY) {
      this.untrimmed.set(account, untrimmed);
      return;
    }
    this.untrimmed.delete(account);
    await this.store.trim(account, KEYS_PER_ACCOUNT);
  }

  private holding(account: string, key: string, attempt: Attempt): KeyOutcome {
    return {
      held: {
        finish: (status, headers, payload) => this.finish(account, key, attempt, status, headers, payload),
      },
    };
  }

  /**
   * Whether the log holds an event of the record's request: its correlation id, after the end it
   * noted. EventStoreDB, which cannot filter by metadata, answers a page at a time within a budget.
   */
  private async wroteEvents(record: Attempt): Promise<boolean> {
    let after: Position | undefined = parsePosition(record.after ?? '') ?? undefined;
    for (;;) {
      const page = await this.log.queryLog({ after, correlationId: record.owner, limit: 1 });
      if (page.events.length > 0) return true;
      if (page.next === null) return false;
      after = page.next;
    }
  }

  onApplicationShutdown(): Promise<void> {
    if (this.pruning !== null) clearInterval(this.pruning);
    return this.store.close();
  }

  private async finish(
    account: string,
    key: string,
    attempt: Attempt,
    status: number,
    headers: Record<string, unknown>,
    payload: unknown,
  ): Promise<void> {
    const { owner } = attempt;
    if (status >= 500) {
      // A failure may follow a committed append (a store that timed out after writing): settled
      // once the answer has left, and left to the lease when the log cannot tell.
      void this.settleFailure(account, key, attempt).catch(() => undefined);
      return;
    }
    // A refused request wrote nothing: its key is given up, and a retry runs again.
    if (status >= 400) return this.store.release(account, key, owner);
    const kept: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const value = headers[name];
      if (typeof value === 'string' || typeof value === 'number') kept[name] = String(value);
    }
    const body = Buffer.isBuffer(payload) ? payload : Buffer.from(typeof payload === 'string' ? payload : '');
    await this.store.complete(account, key, owner, this.seal({ status, headers: kept, body }, account, key));
  }

  /** A failed request's key: a lost answer if it wrote, else given up so that a retry runs again. */
  private async settleFailure(account: string, key: string, attempt: Attempt): Promise<void> {
    if (await this.wroteEvents(attempt)) await this.store.complete(account, key, attempt.owner, ANSWER_LOST);
    else await this.store.release(account, key, attempt.owner);
  }

  /**
   * AES-256-GCM (aesGcmSeal) under a key derived from TOKEN_SECRET, bound to the account and key:
   * nothing kept is readable without it, nor replayed under another key.
   */
  private seal(answer: KeptAnswer, account: string, key: string): string {
    const plain = JSON.stringify({
      status: answer.status,
      headers: answer.headers,
      body: answer.body.toString('base64'),
    });
    const sealed = aesGcmSeal(this.sealingKey, Buffer.from(plain, 'utf8'), boundTo(account, key));
    return SEALED + sealed.toString('base64url');
  }

  /**
   * The answer seal made, or one kept in the layout before it (IV, tag, ciphertext; no associated
   * data), read by the same helper; an altered one is refused (UnreadableCiphertextError).
   */
  private unseal(text: string, account: string, key: string): KeptAnswer {
    let sealed: Buffer;
    let aad: Buffer;
    if (text.startsWith(SEALED)) {
      sealed = Buffer.from(text.slice(SEALED.length), 'base64url');
      aad = boundTo(account, key);
    } else {
      const old = Buffer.from(text, 'base64');
      const tagEnd = AES_GCM_IV_BYTES + AES_GCM_TAG_BYTES;
      sealed = Buffer.concat([
        old.subarray(0, AES_GCM_IV_BYTES),
        old.subarray(tagEnd),
        old.subarray(AES_GCM_IV_BYTES, tagEnd),
      ]);
      aad = UNBOUND;
    }
    const plain = aesGcmOpen(this.sealingKey, sealed, aad, 'A kept Idempotency-Key answer').toString('utf8');
    const { status, headers, body } = JSON.parse(plain) as {
      status: number;
      headers: Record<string, string>;
      body: string;
    };
    return { status, headers, body: Buffer.from(body, 'base64') };
  }

  private startPruning(): void {
    if (this.pruning !== null) return;
    // A failed prune is retried at the next interval; keys do not depend on it.
    this.pruning = setInterval(
      () => void this.store.prune(this.now()).catch(() => undefined),
      PRUNE_INTERVAL_MS,
    );
    this.pruning.unref();
  }
}

/** What a kept answer is bound to: its account and (hashed) key. */
function boundTo(account: string, key: string): Buffer {
  return Buffer.from(`chronicle idempotency answer\n${account}\n${key}`, 'utf8');
}
