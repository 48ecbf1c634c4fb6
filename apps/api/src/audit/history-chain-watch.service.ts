import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import {
  ChainBreak,
  CheckpointStore,
  comparePositions,
  EventStore,
  formatPosition,
  parsePosition,
  Position,
  RecordedEvent,
  storedLinkBreak,
  verifyChain,
} from '@chronicle/event-store';

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

/**
 * What the running server knows of its history's hash chain. At start-up it checks that the event
 * it verified last still holds the hash it had (a history rewritten with hashes made anew, or cut
 * short, does not), then the events after it; readiness waits for that. Then it walks the whole
 * chain once in the background, which catches an event edited below the kept head with its hash
 * kept. Every page the audit serves is checked too, and reports what it finds here. The first
 * break is logged at once, and readiness says so until the server is restarted on a history that
 * verifies.
 */
@Injectable()
export class HistoryChainWatch implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('HistoryChain');
  private state: ChainState = 'verifying';
  private broken: ChainBreak | null = null;
  private keptFrom: string | null = null;
  private stopped = false;
  private work: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: EventStore,
    private readonly checkpoints: CheckpointStore,
  ) {}

  onApplicationBootstrap(): void {
    // Off the start's critical path: the server listens meanwhile, readiness waits for the tail.
    this.work = this.verify().catch((error: unknown) => {
      if (this.stopped) return;
      this.logger.error(`Could not verify the history's hash chain: ${describe(error)}`);
      this.state = this.broken === null ? 'verified' : 'broken';
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    await this.settled();
  }

  /** Resolves once the start-up verification (the tail, then the whole chain) has ended. */
  settled(): Promise<void> {
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

  private async verify(): Promise<void> {
    const scope = this.store.chainScope;
    const kept = (await this.checkpoints.loadState(HISTORY_CHAIN_PROCESSOR)).get(HEAD_KEY) as
      VerifiedHead | undefined;
    let last: RecordedEvent | null = null;
    if (kept !== undefined) {
      this.keptFrom = kept.position;
      const [{ link }] = await this.store.readChainLinks([
        { ...kept, position: parsePosition(kept.position)! },
      ]);
      if (link?.hash !== kept.hash) {
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
    }
    // The tail since the kept head, read as stored, each event against its predecessor.
    let after: Position | undefined = kept === undefined ? undefined : parsePosition(kept.position)!;
    for (;;) {
      const batch: RecordedEvent[] = [];
      for await (const event of this.store.asStored().readAll({ after, limit: BATCH })) batch.push(event);
      if (batch.length === 0 || this.stopped) break;
      const links = await this.store.readChainLinks(batch);
      for (const [index, event] of batch.entries()) {
        const found = storedLinkBreak(scope, event, links[index]);
        if (found !== null) this.report(found);
      }
      last = batch[batch.length - 1];
      after = last.position;
      if (batch.length < BATCH) break;
    }
    if (this.state === 'verifying') this.state = 'verified';
    // Without a kept head the tail was the whole chain, from its first event.
    if (kept !== undefined && !this.stopped) await this.verifyWhole(after!);
    if (this.broken === null && last !== null) await this.keep(last);
  }

  /** The whole chain, once, in the background: an edit below the kept head keeps the hashes after it. */
  private async verifyWhole(upTo: Position): Promise<void> {
    const started = Date.now();
    const whole = await verifyChain(this.store.readChain(), this.store.chainScope, null, upTo);
    if (whole.broken !== null) this.report(whole.broken);
    this.logger.log(
      `Verified the history's hash chain: ${whole.events} events up to ${whole.head?.position ?? 'none'} ` +
        `in ${Date.now() - started} ms${this.broken === null ? '' : `; it breaks at position ${this.broken.position}`}`,
    );
  }

  private keep(event: RecordedEvent): Promise<void> {
    const head: VerifiedHead = {
      position: formatPosition(event.position),
      stream: event.stream,
      revision: event.revision,
      hash: event.hash,
    };
    return this.checkpoints.storeState(HISTORY_CHAIN_PROCESSOR, event.position, new Map([[HEAD_KEY, head]]));
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
