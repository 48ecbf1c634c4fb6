import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { ChronicleConfig } from '@chronicle/config';
import { comparePositions, EventStore, parsePosition, verifyChain } from '@chronicle/event-store';
import { AuditSeal, sealKey, sealSignedBy } from '../audit-seal';
import { signedProtections } from '../history-protections';
import { HistoryVerification, VerifyHistoryQuery } from './verify-history.query';

@QueryHandler(VerifyHistoryQuery)
export class VerifyHistoryHandler implements IQueryHandler<VerifyHistoryQuery, HistoryVerification> {
  constructor(
    private readonly store: EventStore,
    private readonly config: ChronicleConfig,
  ) {}

  async execute({ seal, upTo }: VerifyHistoryQuery): Promise<HistoryVerification> {
    let signatureProblem: string | null = null;
    const key = seal === null ? null : sealKey(this.config, false);
    if (seal !== null) {
      if (key === null) signatureProblem = 'there is no seal key (AUDIT_SEAL_KEY or DATA_DIR/audit-seal-key)';
      else if (!sealSignedBy(seal, key)) signatureProblem = 'the seal was not signed with this seal key';
    }
    // A seal of another key is not trusted to say where the history must reach.
    const trusted = signatureProblem === null ? seal : null;
    const result = await verifyChain(this.store.readChain(), this.store.chainScope, trusted, upTo);
    let sealProblem = signatureProblem ?? result.sealMismatch;
    let protection: string | undefined;
    if (trusted !== null && result.sealMismatch !== null && result.broken === null) {
      ({ problem: sealProblem, protection } = await this.againstProtections(
        trusted,
        key!,
        result.sealMismatch,
      ));
    }
    return {
      ok: result.broken === null && sealProblem === null,
      scope: result.scope,
      events: result.events,
      head: result.head,
      broken: result.broken,
      ...(seal === null
        ? {}
        : {
            seal: {
              position: seal.position,
              valid: sealProblem === null,
              problem: sealProblem,
              ...(protection === undefined ? {} : { protection }),
            },
          }),
    };
  }

  /**
   * A seal the history no longer holds may be of the history before a `history protect`, which
   * re-chained it: held against the old head each signed HistoryProtected.v1 records. Equal to one,
   * it holds (`protection` names that record); taken before one, the problem says how to check it.
   */
  private async againstProtections(
    seal: AuditSeal,
    key: Buffer,
    mismatch: string,
  ): Promise<{ problem: string | null; protection?: string }> {
    let problem = mismatch;
    for await (const protection of signedProtections(this.store, key)) {
      const { oldHead } = protection.record;
      if (
        seal.position === oldHead.position &&
        seal.hash === oldHead.hash &&
        seal.recordedAt === oldHead.recordedAt
      ) {
        return { problem: null, protection: protection.position };
      }
      const sealed = parsePosition(seal.position);
      const old = parsePosition(oldHead.position);
      if (sealed !== null && old !== null && comparePositions(sealed, old) <= 0) {
        problem =
          `the seal was taken before history protect re-chained the history (HistoryProtected.v1 at ${protection.position}, ` +
          `old head ${oldHead.position} with hash ${oldHead.hash}), and is not that old head: check it with ` +
          '`audit verify --seal` on a backup taken before the protect, whose head must be that old head';
      }
    }
    return { problem };
  }
}
