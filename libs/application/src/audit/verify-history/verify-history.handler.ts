import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { ChronicleConfig } from '@chronicle/config';
import { EventStore, verifyChain } from '@chronicle/event-store';
import { sealKey, sealSignedBy } from '../audit-seal';
import { HistoryVerification, VerifyHistoryQuery } from './verify-history.query';

@QueryHandler(VerifyHistoryQuery)
export class VerifyHistoryHandler implements IQueryHandler<VerifyHistoryQuery, HistoryVerification> {
  constructor(
    private readonly store: EventStore,
    private readonly config: ChronicleConfig,
  ) {}

  async execute({ seal, upTo }: VerifyHistoryQuery): Promise<HistoryVerification> {
    let signatureProblem: string | null = null;
    if (seal !== null) {
      const key = sealKey(this.config, false);
      if (key === null) signatureProblem = 'there is no seal key (AUDIT_SEAL_KEY or DATA_DIR/audit-seal-key)';
      else if (!sealSignedBy(seal, key)) signatureProblem = 'the seal was not signed with this seal key';
    }
    // A seal of another key is not trusted to say where the history must reach.
    const trusted = signatureProblem === null ? seal : null;
    const result = await verifyChain(this.store.readChain(), this.store.chainScope, trusted, upTo);
    const sealProblem = signatureProblem ?? result.sealMismatch;
    return {
      ok: result.broken === null && sealProblem === null,
      scope: result.scope,
      events: result.events,
      head: result.head,
      broken: result.broken,
      ...(seal === null
        ? {}
        : { seal: { position: seal.position, valid: sealProblem === null, problem: sealProblem } }),
    };
  }
}
