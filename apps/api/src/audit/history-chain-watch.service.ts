import { setTimeout } from 'node:timers/promises';
import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  Optional,
} from '@nestjs/common';
import { rechainedBy, sealKey, signedProtections } from '@chronicle/application';
import {
  ChainBreak,
  ChainLink,
  ChainRef,
  CheckpointStore,
  comparePositions,
  EventStore,
  formatPosition,
  parsePosition,
  Position,
  storedLinkBreak,
  verifyChain,
} from '@chronicle/event-store';
import { ChronicleConfig, errorMessage } from '@chronicle/config';

/** Names the first broken position of the history as far as the server knows, on any audit answer. */
export const CHAIN_BROKEN_HEADER = 'chronicle-chain-broken';

/** The processor name the verified head is kept under, beside the processors' checkpoints. */
export const HISTORY_CHAIN_PROCESSOR = 'history-chain';
const HEAD_KEY = 'verified-head';
/** Events checked per read of the tail. */
const BATCH = 500;

/** The last event the server verified, kept so that a restart checks only what follows it. */
interface VerifiedHead {
  position: string;
  stream: string;
  revision: number;
  hash: string;
}

export type ChainState = 'verifying' | 'verified' | 'broken';

const CAUGHT_UP_POLL_MS = 100;
/** How often a running server checks the events written since it last verified. */
export const TAIL_CHECK_INTERVAL_MS = 60_000;

/**
 * What the running server knows of its history's hash chain. At start-up it checks that the event
 * it verified last still holds the hash it had (a history rewritten with hashes made anew, or cut
 * short, does not), then the events after it; readiness waits for that. Then it walks the whole
 * chain once in the background, which catches an event edited below the kept head with its hash
 * kept (on a first start, with nothing kept, that walk is all, and readiness does not wait for it).
 * While it runs, it checks the events written since, every minute, and keeps the head it verified.
 * Every page the audit serves is checked too, and reports what it finds here. The first break is
 * logged at once, and readiness says so until the server is restarted on a history that verifies.
 */
@Injectable()
export class HistoryChainWatch implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('HistoryChain');
  private state: ChainState = 'verifying';
  private broken: ChainBreak | null = null;
  private keptFrom: string | null = null;
  /** The last event verified, kept so that the next check (and the next start) goes on from it. */
  private verified: VerifiedHead | null = null;
  private stopped = false;
  private work: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  /** Whether the process has caught up with the history (read models, sessions): the walk waits for it. */
  private caughtUp: () => boolean = () => true;

  constructor(
    private readonly store: EventStore,
    private readonly checkpoints: CheckpointStore,
    /** Where the seal key is, which signs `history protect`'s records; none: no re-chaining is accepted. */
    @Optional() @Inject(ChronicleConfig) private readonly config: ChronicleConfig | null = null,
  ) {}

  onApplicationBootstrap(): void {
    // Off the start's critical path: the server listens meanwhile, readiness waits for the tail.
    this.work = this.guarded(() => this.verifyAtStart());
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    await this.settled();
  }

  /**
   * The whole walk of a start waits until `caughtUp` says so, so that it never slows the replay
   * readiness waits for (set by the app before it starts).
   */
  walkOnceCaughtUp(caughtUp: () => boolean): void {
    this.caughtUp = caughtUp;
  }

  /** Resolves once the verification under way (at start: the tail, then the whole chain) has ended. */
  settled(): Promise<void> {
    return this.work;
  }

  /** Checks the events written since the last verified one, and keeps the new head; one at a time. */
  checkTail(): Promise<void> {
    // Once broken, the state stays until a restart: nothing to learn. Nothing verified yet (the
    // whole walk failed): the whole walk again.
    const check = () =>
      this.broken !== null
        ? Promise.resolve()
        : this.verified === null
          ? this.verifyWhole()
          : this.verifyTail();
    this.work = this.work.then(() => this.guarded(check));
    return this.work;
  }

  /** Where the chain stands: verifying the tail since the kept head, verified, or broken (and where). */
  status(): { state: ChainState; firstBroken: ChainBreak | null; verifyingFrom: string | null } {
    return { state: this.state, firstBroken: this.broken, verifyingFrom: this.keptFrom };
  }

  /** A break found anywhere (a served page, an auditor's verify): logged at once if it is the first. */
  report(found: ChainBreak): void {
    const current = this.broken === null ? null : parsePosition(this.broken.position);
    const at = parsePosition(found.position);
    if (current !== null && at !== null && comparePositions(at, current) >= 0) return;
    this.broken = found;
    this.state = 'broken';
    this.logger.error(
      `The history's hash chain breaks at position ${found.position} (${found.stream}, revision ` +
        `${found.revision}): ${found.reason}. The history was edited outside the service; see docs/audit-integrity.md`,
    );
  }

  /** A check that fails (the store unreachable) is said, and does not stop the next one. */
  private async guarded(check: () => Promise<void>): Promise<void> {
    try {
      await check();
    } catch (error) {
      if (this.stopped) return;
      this.logger.error(`Could not verify the history's hash chain: ${errorMessage(error)}`);
    } finally {
      if (this.state === 'verifying') this.state = this.broken === null ? 'verified' : 'broken';
    }
  }

  private async verifyAtStart(): Promise<void> {
    const kept = (await this.checkpoints.loadState(HISTORY_CHAIN_PROCESSOR)).get(HEAD_KEY) as
      VerifiedHead | undefined;
    if (kept !== undefined) {
      this.keptFrom = kept.position;
      const [{ link }] = await this.store.readChainLinks([
        { ...kept, position: parsePosition(kept.position)! },
      ]);
      if (link?.hash !== kept.hash && !(link !== null && (await this.rechainedByProtect(kept)))) {
        this.report({
          position: kept.position,
          stream: kept.stream,
          revision: kept.revision,
          reason:
            link === null
              ? 'the event verified last is no longer stored: the history was cut short or rewritten'
              : `the event verified last now has the hash ${link.hash}, not ${kept.hash}: the history was rewritten`,
        });
      }
      this.verified = kept;
      await this.verifyTail();
    }
    // Readiness holds the tail only: the whole walk is in the background.
    if (this.state === 'verifying') this.state = this.broken === null ? 'verified' : 'broken';
    while (!this.caughtUp() && !this.stopped) await setTimeout(CAUGHT_UP_POLL_MS, undefined, { ref: false });
    if (!this.stopped) await this.verifyWhole();
    if (!this.stopped) this.timer = setInterval(() => void this.checkTail(), TAIL_CHECK_INTERVAL_MS).unref();
  }

  /**
   * Whether `history protect` re-chained the history over the kept head since: a HistoryProtected.v1
   * after it, signed with the seal key, whose rewrite covered it. The walks that follow verify the
   * chain as re-made.
   */
  private async rechainedByProtect(kept: VerifiedHead): Promise<boolean> {
    const key = this.config === null ? null : sealKey(this.config, false);
    if (key === null) return false;
    for await (const protection of signedProtections(this.store, key, parsePosition(kept.position)!)) {
      if (!rechainedBy(protection, kept.position)) continue;
      this.logger.log(
        `The event verified last (${kept.position}) was re-chained by history protect (HistoryProtected.v1 at ` +
          `${protection.position}); verifying the history as re-chained`,
      );
      return true;
    }
    return false;
  }

  /**
   * The events after the verified head, each against the event it chains to. Read as the chain
   * covers them: the events' values are neither parsed nor decrypted, which the check never needs.
   */
  private async verifyTail(): Promise<void> {
    let after = this.verified === null ? undefined : parsePosition(this.verified.position)!;
    let last: ChainLink | null = null;
    for (;;) {
      const batch: ChainRef[] = [];
      for await (const link of this.store.readChain(after)) {
        last = link;
        batch.push({ position: parsePosition(link.position)!, stream: link.stream, revision: link.revision });
        if (batch.length === BATCH) break;
      }
      if (batch.length === 0 || this.stopped) break;
      const links = await this.store.readChainLinks(batch);
      for (const [index, event] of batch.entries()) {
        const found = storedLinkBreak(this.store.chainScope, event, links[index]);
        if (found !== null) this.report(found);
      }
      after = batch[batch.length - 1].position;
      if (batch.length < BATCH) break;
    }
    if (last !== null) await this.keep(headOf(last));
  }

  /** The whole chain, once: an edit below the kept head keeps the hashes after it. */
  private async verifyWhole(): Promise<void> {
    const started = Date.now();
    const whole = await verifyChain(this.store.readChain(), this.store.chainScope);
    if (whole.broken !== null) this.report(whole.broken);
    this.logger.log(
      `Verified the history's hash chain: ${whole.events} events up to ${whole.head?.position ?? 'none'} ` +
        `in ${Date.now() - started} ms${this.broken === null ? '' : `; it breaks at position ${this.broken.position}`}`,
    );
    const walked = whole.last;
    // Kept only when further than what the tail checks reached.
    if (walked !== null && whole.broken === null) {
      const at = parsePosition(walked.position)!;
      const kept = this.verified === null ? null : parsePosition(this.verified.position);
      if (kept === null || comparePositions(at, kept) > 0) await this.keep(headOf(walked));
    }
  }

  /** Only a history that verifies is kept as verified. */
  private async keep(head: VerifiedHead): Promise<void> {
    this.verified = head;
    if (this.broken !== null) return;
    await this.checkpoints.storeState(
      HISTORY_CHAIN_PROCESSOR,
      parsePosition(head.position)!,
      new Map([[HEAD_KEY, head]]),
    );
  }
}

function headOf(
  event: Pick<ChainLink, 'stream' | 'revision' | 'hash'> & { position: string | Position },
): VerifiedHead {
  return {
    position: typeof event.position === 'string' ? event.position : formatPosition(event.position),
    stream: event.stream,
    revision: event.revision,
    hash: event.hash,
  };
}
