import { Query } from '@nestjs/cqrs';
import { AuditSeal } from '../audit-seal';

/** A history that does not verify is never sealed. */
export class HistoryNotSealableError extends Error {
  readonly code = 'history-broken';

  constructor(reason: string) {
    super(`The history is not sealed: ${reason}`);
    this.name = 'HistoryNotSealableError';
  }
}

/** Verifies the whole chain, then signs its head with the seal key (made on first use). */
export class SealHistoryQuery extends Query<AuditSeal> {}
