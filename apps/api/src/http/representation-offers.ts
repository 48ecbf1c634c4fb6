import { NotAcceptableException } from '@nestjs/common';
import Negotiator from 'negotiator';

/**
 * Accept values whose outcome is remembered, at most, and their length: clients send a handful of
 * them, every request alike, and negotiating each again was 1% of a PATCH's CPU. Others are
 * negotiated every time, so no client can grow what is held.
 */
const REMEMBERED = 64;
const REMEMBERED_LENGTH = 256;

/** The media types a route offers, each naming the representation it stands for. */
export class RepresentationOffers<R extends string> {
  readonly supported: string[];
  /** The outcome for each Accept value seen (null: none offered). */
  private readonly outcomes = new Map<string | undefined, R | null>();

  /** Offered in this order, so that ties (any type, application wildcard, no Accept) go to the first. */
  constructor(private readonly offers: [string, R][]) {
    this.supported = offers.map(([type]) => type);
  }

  /** RFC 9110 proactive negotiation (q-values, wildcards, specificity), or 406 naming what is offered. */
  choose(accept: string | undefined): R {
    let representation = this.outcomes.get(accept);
    if (representation === undefined) {
      representation = this.negotiate(accept);
      if (this.outcomes.size < REMEMBERED && (accept?.length ?? 0) <= REMEMBERED_LENGTH) {
        this.outcomes.set(accept, representation);
      }
    }
    if (representation !== null) return representation;
    throw new NotAcceptableException({
      type: 'not-acceptable',
      title: 'Not Acceptable',
      detail: `None of the media types in Accept is offered. Supported: ${this.supported.join(', ')}.`,
      supported: this.supported,
    });
  }

  private negotiate(accept: string | undefined): R | null {
    const chosen = new Negotiator({ headers: { accept } }).mediaType(this.supported);
    return this.offers.find(([type]) => type === chosen)?.[1] ?? null;
  }
}
