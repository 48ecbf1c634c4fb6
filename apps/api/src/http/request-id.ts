import type { IncomingMessage } from 'node:http';
import { timeOrderedId } from '@chronicle/application';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'node:http' {
  interface IncomingMessage {
    /** The client's own X-Request-Id, when it sent one that is safe to echo and log. */
    clientRequestId?: string;
  }
}

/**
 * The request's id, always made here: it becomes the correlation id of every event the request
 * writes, so no client can join (or forge) another's trace. The client's X-Request-Id, when safe,
 * is kept beside it as the client's own reference (echoed, logged, recorded as clientRequestId).
 */
export function requestIdFor(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  if (typeof given === 'string' && SAFE_REQUEST_ID.test(given)) request.clientRequestId = given;
  // Time-ordered: the embedded store indexes correlation ids, and appends at an index's end are cheap.
  return timeOrderedId();
}

/** The client's X-Request-Id when it sent a safe one, else null. */
export const clientRequestIdOf = (request: { raw: IncomingMessage }): string | null =>
  request.raw.clientRequestId ?? null;

/** What X-Request-Id answers: the client's own id when it sent a safe one, else the server's. */
export const echoedRequestId = (request: { id: string; raw: IncomingMessage }): string =>
  clientRequestIdOf(request) ?? request.id;
