/**
 * Loading an account to decide on it, after 100,000 session events, against loading a fresh one
 * (issue 20, finding 12: replaying token events made a busy account cost seconds, quadratically).
 * In this process, on the built modules (dist/), on the embedded store: a load reads the account's
 * stream and folds it, through a fresh repository each time (no folded state kept), as the first
 * decision after a start does.
 */
import { join } from 'node:path';
import { scratchDir } from '../support/processes';
import { figure } from '../support/report';
import { spread } from '../support/stats';
import type { Benchmark } from './benchmark';

const DIST = join(__dirname, '..', '..', 'dist');
const SESSIONS = 5_000;
/** A session's events: its start, 18 tokens minted in it, its end. */
const EVENTS_PER_SESSION = 20;
const LOADS_PER_ROUND = 2_000;
/** Loads of the legacy account per round: each replays its 100,000 events. */
const LEGACY_LOADS_PER_ROUND = 5;
const ROUNDS = 5;
const iso = (ms: number) => new Date(ms).toISOString();

export const accountLoad: Benchmark = {
  name: 'account-load',
  title: `Loading an account after ${SESSIONS * EVENTS_PER_SESSION} session events, against a fresh account`,
  async run() {
    const { SqliteEventStore } = (await import(
      join(DIST, 'libs/event-store/src/index.js')
    )) as typeof import('@chronicle/event-store');
    const { AccountDirectory, EventSourcedRepository, SYSTEM_AUTH, SystemClock, toNewEvent } = (await import(
      join(DIST, 'libs/application/src/index.js')
    )) as typeof import('@chronicle/application');
    const domain = (await import(
      join(DIST, 'libs/domain/src/index.js')
    )) as typeof import('@chronicle/domain');

    const store = SqliteEventStore.open(scratchDir('account-load'));
    const clock = new SystemClock();
    const context = { actor: 'bench', correlationId: 'account-load', auth: SYSTEM_AUTH };
    const now = Date.now();
    const open = async (accountId: string) => {
      const opened: import('@chronicle/domain').AccountOpened = {
        type: 'AccountOpened.v1',
        data: {
          accountId,
          email: `${accountId}@example.com`,
          userId: `user-${accountId}`,
          roles: ['user'],
          passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$bench$bench',
          openedAt: iso(now),
        },
      };
      await store.append(
        domain.accountStreamName(accountId),
        [toNewEvent(opened, context, clock.now())],
        'no_stream',
      );
    };
    try {
      await open('fresh');
      await open('busy');
      await open('legacy');
      // An account stream as the service wrote it before sessions had streams of their own: a
      // token issue and its revocation per request, in the account's stream. Kept for reading only.
      const legacy: import('@chronicle/domain').AccountEvent[] = [];
      for (let t = 0; t < (SESSIONS * EVENTS_PER_SESSION) / 2; t++) {
        const tokenId = `legacy-${t}`;
        legacy.push(
          {
            type: 'AccessTokenIssued.v1',
            data: { accountId: 'legacy', tokenId, issuedAt: iso(now), expiresAt: iso(now + 3_600_000) },
          },
          { type: 'AccessTokenRevoked.v1', data: { accountId: 'legacy', tokenId, revokedAt: iso(now) } },
        );
      }
      await store.append(
        domain.accountStreamName('legacy'),
        legacy.map((event) => toNewEvent(event, context, clock.now())),
        0,
      );
      // What the service writes for a busy account: sessions, each started with Basic credentials,
      // tokens minted from tokens, then ended (one append per session, as one request would not do:
      // the events are what matters here, not how many requests wrote them).
      for (let s = 0; s < SESSIONS; s++) {
        const sessionId = `session-${s}`;
        const base = { accountId: 'busy', sessionId, credentialsVersion: 0 };
        const events: import('@chronicle/domain').SessionEvent[] = [
          {
            type: 'SessionStarted.v1',
            data: { ...base, startedWith: 'basic', startedAt: iso(now), expiresAt: iso(now + 3_600_000) },
          },
        ];
        for (let t = 0; t < EVENTS_PER_SESSION - 2; t++) {
          events.push({
            type: 'SessionTokenIssued.v1',
            data: {
              ...base,
              tokenId: `${s}-${t}`,
              issuedWith: t === 0 ? null : `${s}-${t - 1}`,
              issuedAt: iso(now),
              expiresAt: iso(now + 3_600_000),
            },
          });
        }
        events.push({
          type: 'SessionEnded.v1',
          data: { ...base, endedWith: `${s}-0`, endedAt: iso(now), expiresAt: iso(now + 3_600_000) },
        });
        await store.append(
          domain.sessionStreamName(sessionId),
          events.map((event) => toNewEvent(event, context, clock.now())),
          'no_stream',
        );
      }

      const loadMicroseconds = async (accountId: string, loads = LOADS_PER_ROUND): Promise<number> => {
        const started = performance.now();
        for (let i = 0; i < loads; i++) {
          const directory = new AccountDirectory(store, new EventSourcedRepository(store, clock), clock, {
            tokenSecret: Buffer.alloc(32),
          } as import('@chronicle/config').ChronicleConfig);
          const account = await directory.findById(accountId);
          if (!account) throw new Error(`Account ${accountId} did not load`);
        }
        return ((performance.now() - started) * 1000) / loads;
      };
      await loadMicroseconds('fresh');
      await loadMicroseconds('busy');
      const fresh: number[] = [];
      const busy: number[] = [];
      const legacyLoads: number[] = [];
      // Alternating, so that a noisy neighbour hurts both alike.
      for (let round = 0; round < ROUNDS; round++) {
        fresh.push(await loadMicroseconds('fresh'));
        busy.push(await loadMicroseconds('busy'));
      }
      // After, not between: its garbage would land on the next round's loads.
      for (let round = 0; round < ROUNDS; round++) {
        legacyLoads.push(await loadMicroseconds('legacy', LEGACY_LOADS_PER_ROUND));
      }
      const ceiling = spread(fresh);
      const value = spread(busy);
      return {
        name: this.name,
        title: this.title,
        figures: [
          figure({
            name: 'one load of the busy account',
            unit: 'µs',
            value,
            ceiling: { name: 'one load of a fresh account', value: ceiling },
            ratio: value.median / ceiling.median,
            target: { kind: '<=', bound: 2 },
          }),
          figure({
            name: `one load of an account stream holding ${SESSIONS * EVENTS_PER_SESSION} token events written before this change`,
            unit: 'µs',
            value: spread(legacyLoads),
            ceiling: { name: 'one load of a fresh account', value: ceiling },
            ratio: spread(legacyLoads).median / ceiling.median,
          }),
        ],
        notes: [
          `${SESSIONS} sessions of ${EVENTS_PER_SESSION} events (start, ${EVENTS_PER_SESSION - 2} tokens, end) ` +
            "in streams of their own; the account stream holds only the account's own events.",
          `${ROUNDS} rounds of ${LOADS_PER_ROUND} loads each, busy and fresh alternating; each load through a ` +
            'fresh repository, so nothing folded is kept between loads.',
          'Accounts whose streams hold token events from before this change still replay them (each in O(1), ' +
            'so linear, no longer quadratic); no snapshot shortens that replay. Reported, not judged.',
        ],
      };
    } finally {
      await store.close();
    }
  },
};
