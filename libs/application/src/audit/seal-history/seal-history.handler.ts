import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { ChronicleConfig } from '@chronicle/config';
import { EventStore, verifyChain } from '@chronicle/event-store';
import { AuditSeal, sealKey, signHead } from '../audit-seal';
import { HistoryNotSealableError, SealHistoryQuery } from './seal-history.query';

@QueryHandler(SealHistoryQuery)
export class SealHistoryHandler implements IQueryHandler<SealHistoryQuery, AuditSeal> {
  constructor(
    private readonly store: EventStore,
    private readonly config: ChronicleConfig,
  ) {}

  async execute(): Promise<AuditSeal> {
    const result = await verifyChain(this.store.readChain(), this.store.chainScope);
    if (result.broken !== null) {
      throw new HistoryNotSealableError(`the chain breaks at position ${result.broken.position}`);
    }
    if (result.head === null) throw new HistoryNotSealableError('it holds no event');
    return signHead(result.head, sealKey(this.config, true)!);
  }
}
