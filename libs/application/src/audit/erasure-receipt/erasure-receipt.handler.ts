import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { ChronicleConfig } from '@chronicle/config';
import { parseCustomerNumber, SubjectErased } from '@chronicle/domain';
import {
  ChainBreak,
  EventStore,
  formatPosition,
  parsePosition,
  RecordedEvent,
  verifyChain,
} from '@chronicle/event-store';
import { ErasureReceipt, receiptSignedBy, sealKey, signReceipt } from '../audit-seal';
import { rechainedBy, signedProtections } from '../history-protections';
import {
  ErasureReceiptError,
  ErasureReceiptQuery,
  ReceiptVerification,
  VerifyReceiptQuery,
} from './erasure-receipt.query';

/** The kind of subject a stream name is, or null when it names none that can be erased. */
export function erasableSubjectKind(subject: string): 'user' | 'customer' | null {
  if (/^user-[^\s]+$/.test(subject)) return 'user';
  if (
    subject.startsWith('customer-') &&
    parseCustomerNumber(subject.slice('customer-'.length)) !== undefined
  ) {
    return 'customer';
  }
  return null;
}

/** The subject's SubjectErased.v1 and its hash as stored, once the chain up to it verifies. */
async function recordedErasure(
  store: EventStore,
  subject: string,
): Promise<{ event: RecordedEvent; hash: string | null; broken: ChainBreak | null }> {
  if (erasableSubjectKind(subject) === null) {
    throw new ErasureReceiptError(
      'invalid-subject',
      `${subject} names no subject: give its stream, user-<user id> or customer-<number>`,
    );
  }
  const event = (await store.readStream(subject)).find((candidate) => candidate.type === 'SubjectErased.v1');
  if (event === undefined) {
    throw new ErasureReceiptError(
      'not-erased',
      `${subject} was never erased: there is no erasure to give a receipt for`,
    );
  }
  const { broken } = await verifyChain(store.readChain(), store.chainScope, null, event.position);
  const [{ link }] = await store.readChainLinks([event]);
  return { event, hash: link?.hash ?? null, broken };
}

@QueryHandler(ErasureReceiptQuery)
export class ErasureReceiptHandler implements IQueryHandler<ErasureReceiptQuery, ErasureReceipt> {
  constructor(
    private readonly store: EventStore,
    private readonly config: ChronicleConfig,
  ) {}

  async execute({ subject }: ErasureReceiptQuery): Promise<ErasureReceipt> {
    const { event, hash, broken } = await recordedErasure(this.store, subject);
    // A receipt vouches for the history up to the erasure: never given over a broken one.
    if (broken !== null || hash === null) {
      throw new ErasureReceiptError(
        'history-broken',
        `No receipt is given: the hash chain breaks at position ${broken?.position ?? formatPosition(event.position)} (see audit verify)`,
      );
    }
    const { kind, erasedAt } = event.data as SubjectErased['data'];
    return signReceipt(
      { subject, kind, erasedAt, position: formatPosition(event.position), hash },
      sealKey(this.config, true)!,
    );
  }
}

@QueryHandler(VerifyReceiptQuery)
export class VerifyReceiptHandler implements IQueryHandler<VerifyReceiptQuery, ReceiptVerification> {
  constructor(
    private readonly store: EventStore,
    private readonly config: ChronicleConfig,
  ) {}

  async execute({ receipt }: VerifyReceiptQuery): Promise<ReceiptVerification> {
    const result = (problem: string | null, broken: ChainBreak | null = null): ReceiptVerification => ({
      ok: problem === null && broken === null,
      subject: receipt.subject,
      position: receipt.position,
      problem,
      broken,
    });
    const key = sealKey(this.config, false);
    if (key === null) return result('there is no seal key (AUDIT_SEAL_KEY or DATA_DIR/audit-seal-key)');
    if (!receiptSignedBy(receipt, key)) return result('the receipt was not signed with this seal key');
    if (parsePosition(receipt.position) === null) return result(`${receipt.position} is not a position`);
    let recorded;
    try {
      recorded = await recordedErasure(this.store, receipt.subject);
    } catch (error) {
      if (error instanceof ErasureReceiptError) return result(error.message);
      throw error;
    }
    const { event, hash, broken } = recorded;
    const data = event.data as SubjectErased['data'];
    const at = formatPosition(event.position);
    if (at !== receipt.position || data.kind !== receipt.kind || data.erasedAt !== receipt.erasedAt) {
      return result(
        `the history holds ${receipt.subject}'s erasure at ${at} (${data.kind}, ${data.erasedAt}), not the one received`,
        broken,
      );
    }
    if (broken !== null) return result(null, broken);
    if (hash !== receipt.hash) {
      for await (const protection of signedProtections(this.store, key, event.position)) {
        if (!rechainedBy(protection, at)) continue;
        return result(
          `the erasure at ${at} was re-chained by history protect (HistoryProtected.v1 at ${protection.position}) ` +
            'after this receipt was given, so its hash is of the history before: take a new receipt with ' +
            '`audit receipt`, and check this one on a backup taken before the protect',
        );
      }
      return result(`the erasure at ${at} is stored with hash ${hash}, not the receipt's ${receipt.hash}`);
    }
    return result(null);
  }
}
