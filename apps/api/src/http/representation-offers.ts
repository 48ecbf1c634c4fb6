import { NotAcceptableException } from '@nestjs/common';
import Negotiator from 'negotiator';

/** The media types a route offers, each naming the representation it stands for. */
export class RepresentationOffers<R extends string> {
  readonly supported: string[];

  /** Offered in this order, so that ties (any type, application wildcard, no Accept) go to the first. */
  constructor(private readonly offers: [string, R][]) {
    this.supported = offers.map(([type]) => type);
  }

  /** RFC 9110 proactive negotiation (q-values, wildcards, specificity), or 406 naming what is offered. */
  choose(accept: string | undefined): R {
    const chosen = new Negotiator({ headers: { accept } }).mediaType(this.supported);
    const representation = this.offers.find(([type]) => type === chosen)?.[1];
    if (representation) return representation;
    throw new NotAcceptableException({
      type: 'not-acceptable',
      title: 'Not Acceptable',
      detail: `None of the media types in Accept is offered. Supported: ${this.supported.join(', ')}.`,
      supported: this.supported,
    });
  }
}
