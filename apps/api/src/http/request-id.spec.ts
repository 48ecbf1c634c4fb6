import type { IncomingMessage } from 'node:http';
import { clientRequestIdOf, echoedRequestId, requestIdFor } from './request-id';

const requestWith = (headers: IncomingMessage['headers']) => ({ headers }) as IncomingMessage;

describe('requestIdFor', () => {
  it('makes a fresh id, different from the last, whatever the client sent', () => {
    const raw = requestWith({ 'x-request-id': 'client-42' });
    const first = requestIdFor(raw);
    const second = requestIdFor(requestWith({ 'x-request-id': first }));
    expect(first).not.toBe('client-42');
    expect(second).not.toBe(first);
  });

  it.each(['abc', 'A-z_0.9:x', 'x'.repeat(128)])(
    'keeps a safe X-Request-Id %j as the client’s own',
    (given) => {
      const raw = requestWith({ 'x-request-id': given });
      requestIdFor(raw);
      expect(raw.clientRequestId).toBe(given);
    },
  );

  it.each(['', 'x'.repeat(129), 'a b', 'a\nb', 'ü', 'a/b', '<script>'])(
    'keeps no unsafe X-Request-Id %j',
    (given) => {
      const raw = requestWith({ 'x-request-id': given });
      requestIdFor(raw);
      expect(raw.clientRequestId).toBeUndefined();
    },
  );

  it('keeps nothing from a repeated header or none', () => {
    const repeated = requestWith({ 'x-request-id': ['a', 'b'] });
    const none = requestWith({});
    requestIdFor(repeated);
    requestIdFor(none);
    expect(repeated.clientRequestId).toBeUndefined();
    expect(none.clientRequestId).toBeUndefined();
  });
});

describe('the request id echoed', () => {
  it("is the client's own when it sent a safe one", () => {
    const raw = requestWith({ 'x-request-id': 'client-42' });
    const id = requestIdFor(raw);
    expect(clientRequestIdOf({ raw })).toBe('client-42');
    expect(echoedRequestId({ id, raw })).toBe('client-42');
  });

  it("is the server's otherwise", () => {
    const raw = requestWith({ 'x-request-id': 'a b' });
    const id = requestIdFor(raw);
    expect(clientRequestIdOf({ raw })).toBeNull();
    expect(echoedRequestId({ id, raw })).toBe(id);
  });
});
