import { NotAcceptableException } from '@nestjs/common';
import Negotiator from 'negotiator';
import { RepresentationOffers } from './representation-offers';

describe('RepresentationOffers', () => {
  const offers = () =>
    new RepresentationOffers([
      ['application/json', 'json'],
      ['text/csv', 'csv'],
    ]);
  let negotiated: jest.SpyInstance;
  beforeEach(() => {
    negotiated = jest.spyOn(Negotiator.prototype, 'mediaType');
  });
  afterEach(() => negotiated.mockRestore());

  it('negotiates by RFC 9110: q-values, wildcards, and the first offer for a tie or no Accept', () => {
    const routes = offers();
    expect(routes.choose('text/csv;q=0.9, application/json;q=0.5')).toBe('csv');
    expect(routes.choose('text/*')).toBe('csv');
    expect(routes.choose('*/*')).toBe('json');
    expect(routes.choose(undefined)).toBe('json');
  });

  it('answers 406 naming what is offered, for a first Accept and for one seen before', () => {
    const routes = offers();
    for (let i = 0; i < 2; i++) {
      expect(() => routes.choose('image/png')).toThrow(NotAcceptableException);
    }
    try {
      routes.choose('image/png');
    } catch (error) {
      expect((error as NotAcceptableException).getResponse()).toEqual({
        type: 'not-acceptable',
        title: 'Not Acceptable',
        detail: 'None of the media types in Accept is offered. Supported: application/json, text/csv.',
        supported: ['application/json', 'text/csv'],
      });
    }
  });

  it('negotiates an Accept value once, whatever the number of requests that send it', () => {
    const routes = offers();
    for (let i = 0; i < 5; i++) routes.choose('application/json');
    expect(negotiated).toHaveBeenCalledTimes(1);
  });

  it('remembers a bounded number of short values: the others are negotiated every time', () => {
    const routes = offers();
    for (let i = 0; i < 64; i++) routes.choose(`text/csv;q=0.${i + 1}`);
    negotiated.mockClear();
    const long = `text/csv, ${'x/y, '.repeat(60)}`;
    for (let i = 0; i < 2; i++) {
      routes.choose('text/csv;q=0.9999');
      routes.choose(long);
    }
    routes.choose('text/csv;q=0.1');
    expect(negotiated).toHaveBeenCalledTimes(4);
  });

  it('remembers a value up to 256 characters long, and not one longer', () => {
    const routes = offers();
    // Padded with the spaces a header may carry after a value.
    const ofLength = (length: number) => 'text/csv'.padEnd(length, ' ');
    for (let i = 0; i < 2; i++) {
      expect(routes.choose(ofLength(256))).toBe('csv');
      expect(routes.choose(ofLength(257))).toBe('csv');
    }
    expect(negotiated).toHaveBeenCalledTimes(3);
  });
});
