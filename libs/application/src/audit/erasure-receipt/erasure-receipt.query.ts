import { Query } from '@nestjs/cqrs';
import type { ChainBreak } from '@chronicle/event-store';
import { ErasureReceipt } from '../audit-seal';

/** Why no receipt is given, or a receipt is not checked: the subject named is none, or was never erased. */
export class ErasureReceiptError extends Error {
  constructor(
    readonly code: 'invalid-subject' | 'not-erased' | 'history-broken',
    message: string,
  ) {
    super(message);
    this.name = 'ErasureReceiptError';
  }
}

/**
 * `audit receipt --subject ID`: the subject's SubjectErased.v1, where the history holds it and its
 * hash, signed under the seal key (made on first use), once the chain up to it verifies.
 */
export class ErasureReceiptQuery extends Query<ErasureReceipt> {
  /** `subject`: the erased subject's stream, `user-<id>` or `customer-<n>`. */
  constructor(readonly subject: string) {
    super();
  }
}

/** What `audit verify-receipt` prints. */
export interface ReceiptVerification {
  /** Signed with this seal key, and the history holds that erasure, chained as the receipt says. */
  ok: boolean;
  subject: string;
  position: string;
  /** Why not, or null. */
  problem: string | null;
  /** The first break of the chain up to the receipt's position, or null. */
  broken: ChainBreak | null;
}

/** Checks a kept receipt: its signature, the erasure at its position, its hash, the chain up to it. */
export class VerifyReceiptQuery extends Query<ReceiptVerification> {
  constructor(readonly receipt: ErasureReceipt) {
    super();
  }
}
